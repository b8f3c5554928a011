//! A new SQLite repository opened by several at once (`serve` and `accelfed report`, two
//! instances on one file, a repository's own writer and reader): each switches the new file to
//! WAL, which SQLite answers the losers "database is locked" without waiting; every opener must
//! still open it, migrated once.

use accelfed_accounting::repository::Repository;

#[test]
fn threads_opening_a_new_repository_at_once_all_open_it() {
    for round in 0..10 {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("repository.sqlite");
        let openers: Vec<_> = (0..6)
            .map(|_| {
                let location = path.to_str().unwrap().to_owned();
                std::thread::spawn(move || {
                    let runtime = tokio::runtime::Builder::new_current_thread()
                        .enable_all()
                        .build()
                        .unwrap();
                    runtime
                        .block_on(Repository::open(&location))
                        .map(drop)
                        .map_err(|err| err.to_string())
                })
            })
            .collect();
        for opener in openers {
            let opened = opener.join().unwrap();
            assert!(opened.is_ok(), "round {round}: {opened:?}");
        }
        let conn = rusqlite::Connection::open(&path).unwrap();
        let mode: String = conn
            .query_row("PRAGMA journal_mode", [], |row| row.get(0))
            .unwrap();
        assert_eq!(mode.to_ascii_lowercase(), "wal", "round {round}");
    }
}
