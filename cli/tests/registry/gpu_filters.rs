//! The registry's GPU filters over whole GPUs and slices: `--min-gpus` counts whole GPUs, time-
//! sliced replicas have their own filter.

use super::*;

#[test]
fn min_gpus_counts_whole_gpus_and_slices_have_their_own_filter() {
    let dir = tempfile::tempdir().unwrap();
    let pki = pki(dir.path());
    let server = Server::start(&central_config(dir.path(), &pki));
    let (_, batch) = sites(dir.path());
    let mut text = std::fs::read_to_string(&batch).unwrap();
    text.push_str(T4_TIME_SLICED);
    std::fs::write(&batch, text).unwrap();

    // The document: physical GPUs beside slots, and the site's physical GPUs per model.
    let output = accelfed()
        .args(["provide", "--config"])
        .arg(&batch)
        .output()
        .unwrap();
    assert!(output.status.success(), "{}", stderr(&output));
    let document: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    let managers = document["ComputingManagerAccelerator"].as_array().unwrap();
    let mig = managers
        .iter()
        .find(|m| m["MIGProfile"] == "1g.10gb")
        .unwrap();
    assert_eq!(
        (
            &mig["TotalAcceleratorSlots"],
            &mig["TotalPhysicalAccelerators"],
            &mig["SlotShare"]
        ),
        (
            &serde_json::json!(56),
            &serde_json::json!(8),
            &serde_json::json!("1/7")
        )
    );
    let t4 = managers.iter().find(|m| m["Model"] == "Tesla T4").unwrap();
    assert_eq!(
        (
            &t4["TotalAcceleratorSlots"],
            &t4["TotalPhysicalAccelerators"]
        ),
        (&serde_json::json!(16), &serde_json::json!(4))
    );
    let site = &document["AdminDomain"][0]["OtherInfo"];
    // 4 nodes x 8 H100s, plus the MIG node's 8; 8 nodes x 4 A100s; 2 nodes x 2 T4s.
    assert_eq!(
        site["TotalPhysicalAccelerators:NVIDIA H100 80GB HBM3"],
        "40"
    );
    assert_eq!(
        site["TotalPhysicalAccelerators:NVIDIA A100-SXM4-80GB"],
        "32"
    );
    assert_eq!(site["TotalPhysicalAccelerators:Tesla T4"], "4");

    let token = dir.path().join("b.token");
    std::fs::write(&token, format!("{TOKEN_B}\n")).unwrap();
    let pushed = push(&server, &pki, &batch, &token);
    assert!(pushed.status.success(), "{}", stderr(&pushed));

    let names = |offers: &[serde_json::Value]| -> Vec<String> {
        offers
            .iter()
            .map(|o| o["resource_name"].as_str().unwrap().to_owned())
            .collect()
    };
    // 56 MIG slices and 8 replicas per node are no whole GPUs.
    let four = query(&server, &pki, &["--min-gpus", "4"]);
    assert_eq!(names(&four), ["A100 nodes", "H100 nodes"]);
    let slices = query(&server, &pki, &["--min-slices", "8"]);
    assert_eq!(names(&slices), ["H100 MIG node", "T4 time-sliced nodes"]);
    let profile = query(
        &server,
        &pki,
        &["--sharing", "mig", "--mig-profile", "1g.10gb"],
    );
    assert_eq!(names(&profile), ["H100 MIG node"]);
    let mig = &profile[0];
    assert_eq!(
        mig["gets"],
        "1g.10gb slice of NVIDIA H100 80GB HBM3, 7 per GPU, 56 slices on 8 GPUs"
    );
    // Counts are JSON numbers, whole ones without a fraction (`8`, not `8.0`), others rounded to
    // the thousandth as every rendering of a count is.
    assert_eq!(mig["gpus_each"], serde_json::json!(0));
    // 20 of 56 slices used: 36 free, 36/7 GPUs' worth.
    assert_eq!(mig["free"], serde_json::json!(36));
    assert_eq!(mig["free_physical"], serde_json::json!(5.143));
    assert_eq!(mig["total_physical"], serde_json::json!(8));
    let t4 = &slices[1];
    assert_eq!(
        t4["gets"],
        "time-slicing replica of Tesla T4, 4 per GPU, 8 replicas on 2 GPUs"
    );

    // The table says the same.
    let table = accelfed()
        .args(["query", "--url", &server.url(), "--ca"])
        .arg(&pki.ca)
        .args(["--min-slices", "8"])
        .output()
        .unwrap();
    assert!(table.status.success(), "{}", stderr(&table));
    let table = String::from_utf8(table.stdout).unwrap();
    assert!(
        table.contains("1g.10gb slice of NVIDIA H100 80GB HBM3, 7 per GPU, 56 slices on 8 GPUs"),
        "{table}"
    );
    assert!(table.contains("5.143/8 (36/56 slots)"), "{table}");

    // Counts that are not finite numbers are refused, by the CLI and by the API.
    let nan = accelfed()
        .args(["query", "--url", &server.url(), "--min-gpus", "nan"])
        .output()
        .unwrap();
    assert_eq!(nan.status.code(), Some(2), "{}", stderr(&nan));
    let ca = std::fs::read(&pki.ca).unwrap();
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    // The broker's num_gpus too: above any site's GPUs it would select as if no count were asked.
    for (path, name, value) in [
        ("offers", "min_gpus", "nan"),
        ("offers", "min_free", "-inf"),
        ("offers", "min_slices", "inf"),
        ("broker", "num_gpus", "2e7"),
        ("broker", "num_gpus", "0"),
    ] {
        let answer = runtime.block_on(async {
            let client = accelfed_publishers::registry::client(Some(&ca)).unwrap();
            let query = [(name, value.to_owned())];
            accelfed_publishers::registry::get(
                &client,
                &server.url(),
                &format!("/registry/v1/{path}"),
                &query,
            )
            .await
        });
        match answer {
            Err(accelfed_publishers::registry::RegistryError::Refused {
                status, reason, ..
            }) => {
                assert_eq!(status, 400, "{name}={value}: {reason}");
                assert!(reason.contains(name), "{name}={value}: {reason}");
            }
            other => panic!("{name}={value} was not refused: {other:?}"),
        }
    }
}
