//! Where Parquet keeps the encoded pages of row groups still being built.
//!
//! Parquet wants each column chunk contiguous in the file, but batches arrive with all columns
//! at once, so every column's pages wait until their row group is written. Row groups of
//! 1 Mi rows over many streams hold far more pages than a flat memory bound allows: the pages
//! of all tables of one export share [`PageMemory`]'s limit, and pages past it go to an
//! unnamed temporary file in the output's directory until their row group is written (where
//! they come back one page at a time). The file holds the same bytes either way.

use std::fs::File;
use std::io::{Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

use bytes::Bytes;
use parquet::arrow::arrow_writer::{PageKey, PageStore, PageStoreArgs, PageStoreFactory};
use parquet::errors::{ParquetError, Result};

/// The bytes of pages held in memory by every table of one export, and their bound.
#[derive(Debug)]
pub(crate) struct PageMemory {
    limit: usize,
    resident: AtomicUsize,
}

impl PageMemory {
    /// A bound of `limit` bytes of pages in memory (0: every page goes to disk).
    pub(crate) fn new(limit: usize) -> Arc<Self> {
        Arc::new(PageMemory {
            limit,
            resident: AtomicUsize::new(0),
        })
    }

    /// Counts `len` more bytes in memory if they fit under the limit.
    fn reserve(&self, len: usize) -> bool {
        self.resident
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |held| {
                held.checked_add(len).filter(|&total| total <= self.limit)
            })
            .is_ok()
    }

    fn release(&self, len: usize) {
        self.resident.fetch_sub(len, Ordering::AcqRel);
    }
}

/// The page stores of one table: its share of [`PageMemory`] and its spill file, made when the
/// first page does not fit.
#[derive(Debug)]
pub(crate) struct TablePages(Arc<TableSpill>);

/// What the column chunks of one table share.
#[derive(Debug)]
struct TableSpill {
    memory: Arc<PageMemory>,
    /// The directory the spill file goes to: the output's, so a full disk shows there and no
    /// page is written to a RAM-backed `/tmp`.
    dir: PathBuf,
    spill: Mutex<Option<SpillFile>>,
}

impl TablePages {
    pub(crate) fn new(memory: &Arc<PageMemory>, output: &Path) -> Arc<Self> {
        let dir = match output.parent() {
            Some(parent) if !parent.as_os_str().is_empty() => parent.to_path_buf(),
            _ => PathBuf::from("."),
        };
        Arc::new(TablePages(Arc::new(TableSpill {
            memory: Arc::clone(memory),
            dir,
            spill: Mutex::new(None),
        })))
    }
}

impl PageStoreFactory for TablePages {
    fn create(&self, _args: &PageStoreArgs<'_>) -> Result<Box<dyn PageStore>> {
        Ok(Box::new(ColumnPages {
            table: Arc::clone(&self.0),
            pages: Vec::new(),
            resident: 0,
        }))
    }
}

/// The spill file of one table, shared by its column chunks. Space is reused: once every
/// spilled page has been taken back (its row group written), the file is emptied.
#[derive(Debug)]
struct SpillFile {
    file: File,
    end: u64,
    /// Bytes spilled and not yet taken back.
    outstanding: u64,
}

/// Where one page is.
#[derive(Debug)]
enum Page {
    Memory(Bytes),
    Spilled { offset: u64, len: usize },
    Taken,
}

/// The pages of one column chunk in progress.
struct ColumnPages {
    table: Arc<TableSpill>,
    pages: Vec<Page>,
    /// Bytes of `pages` in memory (counted in [`PageMemory`]).
    resident: usize,
}

impl ColumnPages {
    fn spill_file(&self) -> Result<MutexGuard<'_, Option<SpillFile>>> {
        self.table
            .spill
            .lock()
            .map_err(|_| ParquetError::General("a Parquet writer thread panicked".into()))
    }

    fn write_to_disk(&self, value: &[u8]) -> Result<Page> {
        let mut guard = self.spill_file()?;
        let spill = match guard.as_mut() {
            Some(spill) => spill,
            None => guard.insert(SpillFile {
                file: tempfile::tempfile_in(&self.table.dir)
                    .map_err(|e| spill_error(&self.table.dir, e))?,
                end: 0,
                outstanding: 0,
            }),
        };
        let offset = spill.end;
        // The file's position is shared by the table's columns: set it for each page.
        spill
            .file
            .seek(SeekFrom::Start(offset))
            .and_then(|_| spill.file.write_all(value))
            .map_err(|e| spill_error(&self.table.dir, e))?;
        spill.end += value.len() as u64;
        spill.outstanding += value.len() as u64;
        Ok(Page::Spilled {
            offset,
            len: value.len(),
        })
    }

    fn read_from_disk(&self, offset: u64, len: usize) -> Result<Bytes> {
        let mut guard = self.spill_file()?;
        let Some(spill) = guard.as_mut() else {
            return Err(ParquetError::General(
                "a spilled Parquet page has no spill file".into(),
            ));
        };
        let mut buf = vec![0; len];
        spill
            .file
            .seek(SeekFrom::Start(offset))
            .and_then(|_| spill.file.read_exact(&mut buf))
            .map_err(|e| spill_error(&self.table.dir, e))?;
        spill.outstanding = spill.outstanding.saturating_sub(len as u64);
        if spill.outstanding == 0 {
            // Every spilled page is back: start the file over instead of growing it.
            spill
                .file
                .set_len(0)
                .map_err(|e| spill_error(&self.table.dir, e))?;
            spill.end = 0;
        }
        Ok(Bytes::from(buf))
    }
}

impl PageStore for ColumnPages {
    fn put(&mut self, value: Bytes) -> Result<PageKey> {
        let page = if self.table.memory.reserve(value.len()) {
            self.resident += value.len();
            Page::Memory(value)
        } else {
            self.write_to_disk(&value)?
        };
        self.pages.push(page);
        Ok(PageKey::new(self.pages.len() as u64 - 1))
    }

    fn take(&mut self, key: PageKey) -> Result<Bytes> {
        let slot = usize::try_from(key.get())
            .ok()
            .and_then(|index| self.pages.get_mut(index))
            .ok_or_else(|| ParquetError::General(format!("no Parquet page {}", key.get())))?;
        match std::mem::replace(slot, Page::Taken) {
            Page::Memory(value) => {
                self.resident -= value.len();
                self.table.memory.release(value.len());
                Ok(value)
            }
            Page::Spilled { offset, len } => self.read_from_disk(offset, len),
            Page::Taken => Err(ParquetError::General(format!(
                "Parquet page {} taken twice",
                key.get()
            ))),
        }
    }

    fn memory_size(&self) -> usize {
        self.resident
    }
}

impl Drop for ColumnPages {
    fn drop(&mut self) {
        // A chunk dropped unwritten (an error) gives its share of memory back.
        self.table.memory.release(self.resident);
    }
}

fn spill_error(dir: &Path, e: std::io::Error) -> ParquetError {
    ParquetError::External(Box::new(std::io::Error::new(
        e.kind(),
        format!(
            "spilling Parquet pages to a temporary file in {}: {e}",
            dir.display()
        ),
    )))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn column(memory: &Arc<PageMemory>, dir: &Path) -> ColumnPages {
        ColumnPages {
            table: Arc::new(TableSpill {
                memory: Arc::clone(memory),
                dir: dir.to_path_buf(),
                spill: Mutex::new(None),
            }),
            pages: Vec::new(),
            resident: 0,
        }
    }

    #[test]
    fn pages_past_the_limit_go_to_disk_and_come_back_the_same() -> Result<()> {
        let dir = tempfile::tempdir()?;
        let memory = PageMemory::new(10);
        let mut pages = column(&memory, dir.path());
        let blobs: Vec<Bytes> = (0..5u8)
            .map(|i| Bytes::from(vec![i; 4 + i as usize]))
            .collect();
        let keys: Vec<PageKey> = blobs
            .iter()
            .map(|b| pages.put(b.clone()))
            .collect::<Result<_>>()?;
        // 4 and 5 bytes fit in 10; the rest spilled.
        assert_eq!(pages.memory_size(), 9);
        assert_eq!(memory.resident.load(Ordering::Acquire), 9);
        assert!(matches!(pages.pages[2], Page::Spilled { .. }));
        for (key, blob) in keys.iter().zip(&blobs) {
            assert_eq!(&pages.take(*key)?, blob);
        }
        assert_eq!(memory.resident.load(Ordering::Acquire), 0);
        assert!(pages.take(keys[0]).is_err(), "a page is taken once");
        // Every spilled page taken: the file starts over.
        let guard = pages.spill_file()?;
        let spill = guard.as_ref().expect("a spill file");
        assert_eq!((spill.end, spill.file.metadata()?.len()), (0, 0));
        Ok(())
    }

    #[test]
    fn a_chunk_dropped_unwritten_gives_its_memory_back() -> Result<()> {
        let dir = tempfile::tempdir()?;
        let memory = PageMemory::new(100);
        let mut pages = column(&memory, dir.path());
        pages.put(Bytes::from_static(b"page"))?;
        assert_eq!(memory.resident.load(Ordering::Acquire), 4);
        drop(pages);
        assert_eq!(memory.resident.load(Ordering::Acquire), 0);
        Ok(())
    }
}
