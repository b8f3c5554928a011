//! A batch of record rows in PostgreSQL's binary `COPY` format, built before its transaction.
//!
//! tokio-postgres's `BinaryCopyInWriter` encodes rows while the `COPY` is open, so the encoding
//! ran inside the service's one writer connection and the database waited for it: building the
//! payload first lets a batch be encoded while the previous one is still being written. The
//! format (PostgreSQL's "Binary Format" of `COPY`) is a fixed header, per row a 16-bit field
//! count and per field a 32-bit length (-1: NULL) followed by the value in its type's binary
//! send format, and a -1 trailer; the five encodings used here are fixed-width big-endian integers
//! and floats, and the bytes of text and `bytea`.

use bytes::{BufMut, Bytes, BytesMut};
use futures_util::SinkExt;
use tokio_postgres::Transaction;

use super::super::row::{COLUMNS, RecordRow};

/// The 11-byte signature, then the flags field and the header extension length (both 0).
const HEADER: &[u8; 19] = b"PGCOPY\n\xff\r\n\0\0\0\0\0\0\0\0\0";

/// One `COPY ... (FORMAT binary)` payload, ready to send.
#[derive(Debug, Clone)]
pub(crate) struct CopyPayload {
    bytes: Bytes,
}

impl CopyPayload {
    /// Encodes `rows` in [`COLUMNS`] order (the `records` table's types).
    pub(crate) fn encode<'a>(rows: impl Iterator<Item = &'a RecordRow>) -> Self {
        // About 250 bytes a row in practice; growing once or twice is cheaper than measuring.
        let mut out = BytesMut::with_capacity(HEADER.len() + 2 + rows.size_hint().0 * 256);
        out.put_slice(HEADER);
        for row in rows {
            put_row(&mut out, row);
        }
        out.put_i16(-1);
        Self {
            bytes: out.freeze(),
        }
    }

    /// Sends the payload with one `COPY` into `table` (which has the columns of `records`).
    pub(crate) async fn copy_into(
        &self,
        tx: &Transaction<'_>,
        table: &str,
    ) -> Result<(), tokio_postgres::Error> {
        let sink = tx
            .copy_in(&format!(
                "COPY {table} ({}) FROM STDIN (FORMAT binary)",
                COLUMNS.join(", ")
            ))
            .await?;
        futures_util::pin_mut!(sink);
        sink.send(self.bytes.clone()).await?;
        sink.finish().await.map(|_| ())
    }
}

fn put_row(out: &mut BytesMut, row: &RecordRow) {
    out.put_i16(COLUMNS.len() as i16);
    put_bytes(out, &row.record_id);
    put_i32(out, row.period.index());
    put_text(out, Some(&row.site));
    put_text(out, row.vo.as_deref());
    put_text(out, Some(&row.model));
    put_text(out, Some(&row.record_type));
    put_text(out, Some(&row.associated_record));
    put_text(out, row.global_user_name.as_deref());
    put_text(out, row.fqan.as_deref());
    put_i64(out, Some(row.gpu_milli));
    put_i64(out, row.cores);
    put_i64(out, row.active_seconds);
    put_i64(out, Some(row.available_seconds));
    put_text(out, row.benchmark_type.as_deref());
    put_f64(out, row.benchmark);
    put_text(out, Some(&row.accelerator_type));
    put_text(out, Some(&row.source));
    put_i64(out, row.first_seen);
    put_i64(out, row.last_seen);
    put_f64(out, row.gpu_count);
    put_text(out, row.sharing.as_deref());
    put_f64(out, row.installed);
    put_f64(out, row.energy_wh);
    put_i64(out, row.idle_seconds);
}

fn put_f64(out: &mut BytesMut, value: Option<f64>) {
    match value {
        Some(value) => {
            out.put_i32(8);
            out.put_f64(value);
        }
        None => out.put_i32(-1),
    }
}

fn put_bytes(out: &mut BytesMut, value: &[u8]) {
    // Values are bounded far below 2 GiB by the batch size limits checked on submission.
    out.put_i32(value.len() as i32);
    out.put_slice(value);
}

fn put_text(out: &mut BytesMut, value: Option<&str>) {
    match value {
        Some(text) => put_bytes(out, text.as_bytes()),
        None => out.put_i32(-1),
    }
}

fn put_i32(out: &mut BytesMut, value: i32) {
    out.put_i32(4);
    out.put_i32(value);
}

fn put_i64(out: &mut BytesMut, value: Option<i64>) {
    match value {
        Some(value) => {
            out.put_i32(8);
            out.put_i64(value);
        }
        None => out.put_i32(-1),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_empty_payload_is_the_header_and_the_trailer() {
        let payload = CopyPayload::encode([].iter());
        assert_eq!(&payload.bytes[..19], HEADER);
        assert_eq!(&payload.bytes[19..], [0xff, 0xff]);
    }
}
