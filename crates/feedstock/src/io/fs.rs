//! The file-system layer the pipeline's readers open files through.
