//! The files a private Slurm runs from: slurm.conf, slurmdbd.conf, gres.conf with fake GPUs (plain
//! files; `AutoDetect=off` means Slurm never opens them) and, where asked for, GPU shards on them, a
//! MUNGE key and a JWT key.

use std::fmt::Write as _;
use std::path::Path;

/// Ports and names of one instance; all private to it.
#[derive(Debug, Clone)]
pub struct Layout {
    pub cluster: String,
    pub node: String,
    pub database: String,
    pub ctld_port: u16,
    pub slurmd_port: u16,
    pub dbd_port: u16,
    /// GPUs on the one node, all of type `a100`.
    pub gpus: u32,
    /// GPU shards (`gres/shard`, Slurm's MPS-style sharing) each GPU offers, typed `a100` like the
    /// GPUs; 0 (the default cluster) offers none, so the tests that do not ask keep their cluster
    /// exactly. Slurm 22.05 gives one job the shards of one GPU only: a job asking for more than
    /// this is accepted and waits (Reason=Resources), as no one GPU has that many.
    pub shards_per_gpu: u32,
    pub cpus: u32,
}

pub fn slurm_conf(dir: &Path, layout: &Layout, hostname: &str) -> String {
    let d = dir.display();
    let mut conf = String::new();
    let lines = [
        format!("ClusterName={}", layout.cluster),
        "SlurmctldHost=localhost(127.0.0.1)".to_owned(),
        format!("SlurmctldPort={}", layout.ctld_port),
        format!("SlurmdPort={}", layout.slurmd_port),
        "AuthType=auth/munge".to_owned(),
        format!("AuthInfo=socket={d}/munge.sock"),
        "AuthAltTypes=auth/jwt".to_owned(),
        format!("AuthAltParameters=jwt_key={d}/jwt.key"),
        "SlurmUser=root".to_owned(),
        format!("StateSaveLocation={d}/state"),
        format!("SlurmdSpoolDir={d}/spool"),
        format!("SlurmctldPidFile={d}/slurmctld.pid"),
        format!("SlurmdPidFile={d}/slurmd.pid"),
        format!("SlurmctldLogFile={d}/log/slurmctld.log"),
        format!("SlurmdLogFile={d}/log/slurmd.log"),
        "ProctrackType=proctrack/linuxproc".to_owned(),
        "TaskPlugin=task/none".to_owned(),
        "MpiDefault=none".to_owned(),
        "ReturnToService=2".to_owned(),
        // The node claims more CPUs than a small test machine has, so jobs do not queue on CPUs.
        "SlurmdParameters=config_overrides".to_owned(),
        "SelectType=select/cons_tres".to_owned(),
        "SelectTypeParameters=CR_Core".to_owned(),
        format!("GresTypes={}", gres_types(layout)),
        "AccountingStorageType=accounting_storage/slurmdbd".to_owned(),
        "AccountingStorageHost=127.0.0.1".to_owned(),
        format!("AccountingStoragePort={}", layout.dbd_port),
        // The MUNGE socket for slurmdbd connections (the default would be the system's munged).
        format!("AccountingStoragePass={d}/munge.sock"),
        // Without gres/shard here Slurm's accounting drops shards and a shard job reads as a CPU
        // job; the typed entry is what names the shards' GPU type in the job's TRES.
        format!("AccountingStorageTRES={}", tracked_tres(layout)),
        "JobAcctGatherType=jobacct_gather/linux".to_owned(),
        "JobAcctGatherFrequency=5".to_owned(),
        "SchedulerParameters=sched_interval=2".to_owned(),
        format!(
            "NodeName={} NodeHostname={hostname} NodeAddr=127.0.0.1 CPUs={} RealMemory=4000 Gres={} State=UNKNOWN",
            layout.node,
            layout.cpus,
            node_gres(layout)
        ),
        format!(
            "PartitionName=gpu Nodes={} Default=YES MaxTime=INFINITE State=UP",
            layout.node
        ),
        format!(
            "PartitionName=atlas Nodes={} MaxTime=60 State=UP AllowAccounts=vo.atlas",
            layout.node
        ),
    ];
    for line in lines {
        let _ = writeln!(conf, "{line}");
    }
    conf
}

pub fn slurmdbd_conf(dir: &Path, layout: &Layout) -> String {
    let d = dir.display();
    format!(
        "AuthType=auth/munge\nAuthInfo=socket={d}/munge.sock\nAuthAltTypes=auth/jwt\n\
         AuthAltParameters=jwt_key={d}/jwt.key\nDbdHost=localhost\nDbdAddr=127.0.0.1\nDbdPort={}\n\
         SlurmUser=root\nLogFile={d}/log/slurmdbd.log\nPidFile={d}/slurmdbd.pid\n\
         StorageType=accounting_storage/mysql\nStorageHost=127.0.0.1\nStoragePort=3306\n\
         StorageUser=root\nStorageLoc={}\n",
        layout.dbd_port, layout.database
    )
}

fn sharded(layout: &Layout) -> bool {
    layout.shards_per_gpu > 0
}

fn gres_types(layout: &Layout) -> &'static str {
    if sharded(layout) { "gpu,shard" } else { "gpu" }
}

fn tracked_tres(layout: &Layout) -> &'static str {
    if sharded(layout) {
        "gres/gpu,gres/gpu:a100,gres/shard,gres/shard:a100"
    } else {
        "gres/gpu,gres/gpu:a100"
    }
}

/// The node's `Gres=`: the shards are the node's total, as slurm.conf counts them.
fn node_gres(layout: &Layout) -> String {
    let gpus = format!("gpu:a100:{}", layout.gpus);
    if sharded(layout) {
        format!("{gpus},shard:a100:{}", layout.shards_per_gpu * layout.gpus)
    } else {
        gpus
    }
}

pub fn gres_conf(dir: &Path, layout: &Layout) -> String {
    let files = format!("{}/gpu[0-{}]", dir.display(), layout.gpus.saturating_sub(1));
    let mut conf = format!(
        "AutoDetect=off\nNodeName={} Name=gpu Type=a100 File={files}\n",
        layout.node
    );
    if sharded(layout) {
        // Shards live on the GPU files: Count is the node's total, which Slurm spreads evenly
        // over the files listed (gres.conf(5), File: "the exception to this is MPS/Sharding").
        let _ = writeln!(
            conf,
            "NodeName={} Name=shard Type=a100 Count={} File={files}",
            layout.node,
            layout.shards_per_gpu * layout.gpus
        );
    }
    conf
}
