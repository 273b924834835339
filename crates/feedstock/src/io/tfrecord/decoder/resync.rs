//! Resynchronisation: after a damaged frame, the scan for the next
//! intact one.
//!
//! ADVICE FOR HACKERS: this runs only after damage, never on the clean
//! path, so it may afford to check a candidate twice over (its own
//! frame, then the frame after it). What it must never do is take a
//! frame stored inside a damaged record's payload for a record: see
//! [`Decoder::resync`] for the rules, and keep them in step with the
//! rules in docs/corrupt-records.md.

use super::{
    append, framed_len, le_u32, masked_crc32c, Decoded, Decoder, Error,
    Result, Skip, State, FOOTER_LEN, HEADER_LEN,
};

/// How many bytes a scan takes from the input at a time beyond what it
/// needs, so that a scan over a long damaged region is not a call per
/// byte; also the dead prefix of the scan window kept before compacting.
const SCAN_BLOCK: usize = 64 * 1024;

/// What the scan makes of a candidate frame.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Verdict {
    /// Resume here.
    Frame,
    /// Not here: try the next byte.
    NoFrame,
    /// Input was moved to the scan window: look again.
    Pulled,
    /// The chunk is used up: ask for more input.
    NeedMore,
}

impl Decoder {
    /// A damaged frame: without resynchronisation, the error; with it,
    /// the start of a scan from the frame's second byte, `frame` holding
    /// the frame's bytes consumed so far. `trusted`: the frame's header
    /// checked and only its data CRC failed, so its end is likely the
    /// next frame's start.
    pub(super) fn damaged(
        &mut self,
        err: Error,
        frame: Vec<u8>,
        trusted: bool,
    ) -> Result<()> {
        if !self.resync {
            return Err(err);
        }
        self.cause = Some(err);
        self.trusted = trusted.then_some(frame.len());
        self.held = frame;
        self.held_start = 0;
        self.scan_base = self.pos.offset;
        self.cand = 1;
        self.checked = false;
        self.state = State::Resync;
        self.have = 0;
        self.buf.clear();
        Ok(())
    }

    /// The length of the record a header at stream offset `at` frames,
    /// if it can be the header of an intact frame: its length CRC
    /// matches, and the length is within the limit and the stream.
    pub(super) fn plausible(&self, header: &[u8], at: u64) -> Option<u64> {
        let len_bytes = &header[..8];
        if masked_crc32c(len_bytes) != le_u32(&header[8..HEADER_LEN]) {
            return None;
        }
        let len = u64::from_le_bytes(len_bytes.try_into().expect("8 bytes"));
        let fits = len <= self.max_record_len
            && self
                .stream_len
                .is_none_or(|n| at.saturating_add(framed_len(len)) <= n);
        fits.then_some(len)
    }

    /// Moves up to `want` bytes (at least a scan block when there are
    /// that many) from `input[*at..]` to the scan window.
    pub(super) fn pull(
        &mut self,
        input: &[u8],
        at: &mut usize,
        want: usize,
    ) -> Result<()> {
        let n = want.max(SCAN_BLOCK).min(input.len() - *at);
        let here = self.scan_base + self.cand as u64;
        append(&mut self.held, &input[*at..*at + n], here)?;
        *at += n;
        Ok(())
    }

    /// Scans for the next intact frame; `eof` says `input` is the end.
    /// Reports the skipped region once it is known, or asks for more.
    ///
    /// # Errors
    ///
    /// ResourceExhausted when memory runs out holding a candidate frame.
    pub(super) fn scan(
        &mut self,
        input: &[u8],
        eof: bool,
    ) -> Result<(Decoded, usize)> {
        let mut at = 0;
        loop {
            if let Some(t) = self.trusted {
                let listed = self.starts.as_ref().is_none_or(|starts| {
                    starts.binary_search(&(self.scan_base + t as u64)).is_ok()
                });
                if !listed {
                    // The index says no record starts there: scan.
                    self.trusted = None;
                    continue;
                }
                // A record whose header checked but whose data did not:
                // if a header that checks (or the end of the stream)
                // follows where it says it ends, the damage is that one
                // record. Adjacent damaged records then count one each,
                // and a frame stored in its payload is never taken.
                let have = self.held.len() - t;
                if have < HEADER_LEN {
                    if at < input.len() {
                        self.pull(input, &mut at, HEADER_LEN - have)?;
                        continue;
                    }
                    if !eof {
                        return Ok((Decoded::NeedMore, at));
                    }
                    if have == 0 {
                        return Ok((self.resume_at(t), at));
                    }
                } else {
                    // Only the length CRC: what the next frame holds is
                    // for the decoding from there to judge, so that the
                    // region is the same whether the stream's length is
                    // known or not.
                    let header = &self.held[t..t + HEADER_LEN];
                    let crc = le_u32(&header[8..HEADER_LEN]);
                    if masked_crc32c(&header[..8]) == crc {
                        return Ok((self.resume_at(t), at));
                    }
                }
                // Not so: the length was damaged after all, or bytes
                // were lost or added inside the record. Scan.
                self.trusted = None;
            }
            let have = self.held.len() - self.cand;
            if have < HEADER_LEN {
                if at < input.len() {
                    self.pull(input, &mut at, HEADER_LEN - have)?;
                    continue;
                }
                if !eof {
                    return Ok((Decoded::NeedMore, at));
                }
                // No intact frame before the end: the rest is skipped.
                let end = self.scan_base + self.held.len() as u64;
                self.held = Vec::new();
                self.cand = 0;
                self.trusted = None;
                return Ok((self.skipped_to(end), at));
            }
            match self.candidate(input, &mut at, eof)? {
                Verdict::Frame => return Ok((self.resume_at(self.cand), at)),
                Verdict::NeedMore => return Ok((Decoded::NeedMore, at)),
                Verdict::Pulled => continue,
                Verdict::NoFrame => {}
            }
            self.cand += 1;
            self.checked = false;
            if self.cand >= SCAN_BLOCK && self.cand * 2 >= self.held.len() {
                self.held.drain(..self.cand);
                self.scan_base += self.cand as u64;
                self.cand = 0;
            }
        }
    }

    /// Whether the scan may resume at the candidate `self.cand` (which
    /// has a header's worth of bytes in the window): its whole frame
    /// checks (length CRC, length within the limit and the stream, data
    /// CRC), and a record starts there according to the
    /// [`record_starts`](Self::record_starts) when they are known, else
    /// the frame after it checks too or it ends the stream. May pull
    /// input from `input[*at..]` first.
    fn candidate(
        &mut self,
        input: &[u8],
        at: &mut usize,
        eof: bool,
    ) -> Result<Verdict> {
        let here = self.scan_base + self.cand as u64;
        if let Some(starts) = &self.starts {
            if starts.binary_search(&here).is_err() {
                return Ok(Verdict::NoFrame);
            }
        }
        let Some(end) = self.frame_checks(self.cand, input, at, eof)? else {
            return Ok(Verdict::NoFrame);
        };
        let end = match end {
            Ok(end) => end,
            Err(wait) => return Ok(wait),
        };
        if self.starts.is_some() {
            return Ok(Verdict::Frame);
        }
        // The frame checks: remember it, so that waiting for the next
        // frame does not check it again.
        self.checked = true;
        // A frame stored whole inside a damaged record's payload checks
        // too; what follows it (more payload, or the record's footer)
        // seldom is a frame. So the frame is taken only when the next
        // one checks as well, or the stream ends with it.
        let after = self.scan_base + end as u64;
        if self.stream_len == Some(after) {
            return Ok(Verdict::Frame);
        }
        if eof && *at == input.len() && self.held.len() == end {
            return Ok(Verdict::Frame);
        }
        Ok(match self.frame_checks(end, input, at, eof)? {
            Some(Ok(_)) => Verdict::Frame,
            Some(Err(wait)) => wait,
            None => Verdict::NoFrame,
        })
    }

    /// Whether a whole frame that checks starts at index `i` of the scan
    /// window: `Some(Ok(end))` with the index just after it; `None` if
    /// it does not (or the stream ends inside it); `Some(Err(_))` when
    /// more input is needed to tell (pulled from `input[*at..]`, or to
    /// be asked for). The candidate `self.cand`, once it has checked
    /// (`self.checked`), is not checked again.
    fn frame_checks(
        &mut self,
        i: usize,
        input: &[u8],
        at: &mut usize,
        eof: bool,
    ) -> Result<Option<std::result::Result<usize, Verdict>>> {
        let have = self.held.len() - i;
        if have < HEADER_LEN {
            if *at < input.len() {
                self.pull(input, at, HEADER_LEN - have)?;
                return Ok(Some(Err(Verdict::Pulled)));
            }
            if !eof {
                return Ok(Some(Err(Verdict::NeedMore)));
            }
            return Ok(None);
        }
        let here = self.scan_base + i as u64;
        let header = &self.held[i..i + HEADER_LEN];
        let Some(len) = self.plausible(header, here) else {
            return Ok(None);
        };
        let need = framed_len(len);
        if (have as u64) < need {
            if *at < input.len() {
                let want = (need - have as u64) as usize;
                self.pull(input, at, want)?;
                return Ok(Some(Err(Verdict::Pulled)));
            }
            if !eof {
                return Ok(Some(Err(Verdict::NeedMore)));
            }
            // The stream ends inside it: not a frame.
            return Ok(None);
        }
        let data = i + HEADER_LEN;
        let end = data + len as usize;
        if !(i == self.cand && self.checked) {
            let stored = le_u32(&self.held[end..end + FOOTER_LEN]);
            if masked_crc32c(&self.held[data..end]) != stored {
                return Ok(None);
            }
        }
        Ok(Some(Ok(end + FOOTER_LEN)))
    }

    /// Ends the resynchronisation in progress at index `i` of the scan
    /// window: decoding goes on from there.
    pub(super) fn resume_at(&mut self, i: usize) -> Decoded {
        let here = self.scan_base + i as u64;
        self.held_start = i;
        self.cand = 0;
        self.checked = false;
        self.trusted = None;
        if self.held_start == self.held.len() {
            self.held.clear();
            self.held_start = 0;
        }
        self.skipped_to(here)
    }

    /// Ends the resynchronisation in progress at stream offset `end`,
    /// where decoding goes on, and reports the region skipped.
    pub(super) fn skipped_to(&mut self, end: u64) -> Decoded {
        let offset = self.pos.offset;
        let cause = self.cause.take().unwrap_or_else(|| {
            Error::data_loss("corrupt record").with_offset(offset)
        });
        self.pos.offset = end;
        self.state = State::Header;
        self.have = 0;
        Decoded::Skipped(Skip {
            offset,
            len: end - offset,
            cause,
            unreadable_rest: false,
        })
    }
}
