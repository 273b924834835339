//! `decode_csv`: CSV lines to typed columns.
