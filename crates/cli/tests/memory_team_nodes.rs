//! Many nodes on one team database, one of them killed: two `loci serve` processes (the
//! real binary, HTTP on loopback) of two clones of one repository share one real
//! PostgreSQL; eight writers per node remember 1,000 memories each (and every fifth,
//! edit it) through their node while a node is killed with `SIGKILL` at random moments
//! and restarted. A request the kill cut off is sent again once the node is back, as a
//! client would: a remember that had committed then answers `name_taken`, never a
//! second copy. Afterwards every write is in the database exactly once with its body,
//! every edit applied, each memory's versions run 1..=n without a gap or a duplicate,
//! and what one node acknowledged is read and recalled through the other.
//!
//! Slow tier (`#[ignore]`, run by `.ci/run`'s `--include-ignored`);
//! `LOCI_TEST_NODE_WRITES=N` runs N writes per writer instead of 1,000.

use crate::common::Env;
use crate::pg_cluster;
use crate::serve_support::{self, Server};

use std::collections::{BTreeMap, HashSet};
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

const PASSWORD: &str = "Nodes-s3cret-pw";
const WRITERS: usize = 8;
/// How long the whole run may take before the test fails rather than hangs.
const RUN_DEADLINE: Duration = Duration::from_secs(900);
/// How long a writer waits for its killed node to come back.
const RESTART_DEADLINE: Duration = Duration::from_secs(60);

/// One node: its clone, its server, and which incarnation of the server it is (a
/// writer whose request failed at the socket waits for the next one).
struct Node {
    env: Env,
    url: String,
    state: Mutex<Incarnation>,
    restarted: Condvar,
    /// The workspace's registry id, the same across restarts.
    workspace: i64,
}

struct Incarnation {
    server: Option<Server>,
    addr: String,
    generation: u64,
}

impl Node {
    fn new(remote: &str, url: &str) -> Node {
        let env = Env::new();
        env.git(&["init", "-q"]);
        env.git(&["remote", "add", "origin", remote]);
        env.write(&[("src/lib.rs", "pub fn run() -> u32 {\n    1\n}\n")]);
        let (code, out) = env.json(&["index"]);
        assert_eq!(code, 0, "{out}");
        let node = Node {
            env,
            url: url.to_string(),
            state: Mutex::new(Incarnation {
                server: None,
                addr: String::new(),
                generation: 0,
            }),
            restarted: Condvar::new(),
            workspace: 0,
        };
        node.restart();
        let s = node.state.lock().unwrap();
        let workspace = serve_support::workspace_id(s.server.as_ref().unwrap());
        drop(s);
        Node { workspace, ..node }
    }

    /// Starts the server (again): waits for its listening line, then wakes writers.
    fn restart(&self) {
        let server = serve_support::start(&self.env, &[], &[("LOCI_MEMORY_URL", &self.url)]);
        let mut s = self.state.lock().unwrap();
        s.addr = server.addr.clone();
        s.server = Some(server);
        s.generation += 1;
        self.restarted.notify_all();
    }

    /// `SIGKILL`, then reaps the process: whatever it was doing is cut off.
    fn kill(&self) {
        let mut s = self.state.lock().unwrap();
        if let Some(mut server) = s.server.take() {
            server.child.kill().unwrap();
            server.child.wait().unwrap();
        }
    }

    fn current(&self) -> (String, u64) {
        let s = self.state.lock().unwrap();
        (s.addr.clone(), s.generation)
    }

    /// Blocks until an incarnation newer than `generation` listens.
    fn wait_newer(&self, generation: u64) {
        let s = self.state.lock().unwrap();
        let (s, timeout) = self
            .restarted
            .wait_timeout_while(s, RESTART_DEADLINE, |s| s.generation <= generation)
            .unwrap();
        drop(s);
        assert!(
            !timeout.timed_out(),
            "the node did not come back within {RESTART_DEADLINE:?}"
        );
    }

    /// One memory operation through this node's current server: `Some((status, body))`
    /// when it answered, `None` when the socket failed (killed mid-request).
    fn post(&self, op: &str, body: &Value) -> (Option<(u16, Value)>, u64) {
        let (addr, generation) = self.current();
        let url = format!(
            "http://{addr}/api/v1/workspaces/{}/memory/{op}",
            self.workspace
        );
        let answer = serve_support::agent()
            .post(&url)
            .header("Authorization", format!("Bearer {}", serve_support::KEY))
            .send_json(body)
            .ok()
            .and_then(|resp| {
                let status = resp.status().as_u16();
                let text = resp.into_body().read_to_string().ok()?;
                Some((status, serde_json::from_str(&text).unwrap_or(json!(text))))
            });
        (answer, generation)
    }

    /// [`Node::post`] until it answers, waiting out restarts: the final answer.
    fn post_answered(&self, op: &str, body: &Value) -> (u16, Value) {
        loop {
            match self.post(op, body) {
                (Some(answer), _) => return answer,
                (None, generation) => self.wait_newer(generation),
            }
        }
    }
}

/// What one writer had acknowledged: names remembered (with the body sent), names
/// whose edit was.
#[derive(Default)]
struct Acked {
    remembered: Vec<(String, String)>,
    edited: Vec<String>,
    /// Answers that were neither success nor, on a retry, `name_taken` (must be none).
    refused: Vec<String>,
    /// Requests cut off by a kill (each sent again).
    lost: usize,
    /// Remembers whose cut-off first try had committed (the retry said `name_taken`).
    committed_unacknowledged: usize,
}

/// One writer: `writes` remembers through `node`, every fifth memory edited. A request
/// whose socket failed may or may not have committed: the writer waits for the node to
/// come back and sends it again until it is answered.
fn writer(node: &Node, tag: &str, writes: usize) -> Acked {
    let mut acked = Acked::default();
    for i in 0..writes {
        let name = format!("{tag}-{i}");
        let text = format!("Written by {tag} as number {i}; {}.", token(&name));
        let (answer, retried) = send(
            node,
            "remember",
            &json!({"name": name, "body": text}),
            &mut acked,
        );
        match answer {
            (200, _) => {}
            (409, v) if retried && v["error"]["kind"] == "name_taken" => {
                acked.committed_unacknowledged += 1;
            }
            (status, v) => {
                acked.refused.push(format!("remember {name}: {status} {v}"));
                continue;
            }
        }
        acked.remembered.push((name.clone(), text));
        if i % 5 == 0 {
            let edit = json!({"name": name, "body": format!("Edited by {tag}: number {i}; {}.", token(&name))});
            match send(node, "edit", &edit, &mut acked).0 {
                (200, _) => acked.edited.push(name),
                (status, v) => acked.refused.push(format!("edit {name}: {status} {v}")),
            }
        }
    }
    acked
}

/// One request through `node`, sent again after each kill that cut it off until it is
/// answered: the answer, and whether it was sent more than once.
fn send(node: &Node, op: &str, body: &Value, acked: &mut Acked) -> ((u16, Value), bool) {
    let mut retried = false;
    loop {
        match node.post(op, body) {
            (Some(answer), _) => return (answer, retried),
            (None, generation) => {
                acked.lost += 1;
                retried = true;
                node.wait_newer(generation);
            }
        }
    }
}

#[test]
#[ignore = "slow: two servers, 16,000 remembers and SIGKILLs on a real PostgreSQL"]
fn acknowledged_writes_survive_a_node_killed_at_random_moments() {
    let Some((url, admin)) = pg_cluster::database_with_password_and_admin(PASSWORD) else {
        return;
    };
    let writes: usize = std::env::var("LOCI_TEST_NODE_WRITES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(1_000);
    let started = Instant::now();
    let nodes = Arc::new([
        Node::new("https://git.example.com/team/nodes.git", &url),
        Node::new("git@git.example.com:team/nodes.git", &url),
    ]);
    let done = Arc::new((Mutex::new(false), Condvar::new()));

    // The killer: at a random moment (200..2,000 ms apart), SIGKILL a random node and
    // start it again, until the writers are done.
    let killer = {
        let (nodes, done) = (nodes.clone(), done.clone());
        std::thread::spawn(move || {
            let mut rng = seed();
            let (mut kills, mut down) = (0, Duration::ZERO);
            loop {
                let pause = Duration::from_millis(200 + next(&mut rng) % 1_800);
                let (lock, cv) = &*done;
                let finished = cv
                    .wait_timeout_while(lock.lock().unwrap(), pause, |d| !*d)
                    .unwrap()
                    .0;
                if *finished {
                    return (kills, down);
                }
                drop(finished);
                let node = &nodes[(next(&mut rng) % 2) as usize];
                let t = Instant::now();
                node.kill();
                kills += 1;
                node.restart();
                down += t.elapsed();
            }
        })
    };

    let handles: Vec<_> = (0..2)
        .flat_map(|n| (0..WRITERS).map(move |w| (n, w)))
        .map(|(n, w)| {
            let nodes = nodes.clone();
            std::thread::spawn(move || (n, writer(&nodes[n], &format!("n{n}w{w}"), writes)))
        })
        .collect();
    let mut acked: Vec<(usize, Acked)> = handles.into_iter().map(|h| h.join().unwrap()).collect();
    {
        let (lock, cv) = &*done;
        *lock.lock().unwrap() = true;
        cv.notify_all();
    }
    let (kills, down) = killer.join().unwrap();
    assert!(
        started.elapsed() < RUN_DEADLINE,
        "the run took {:?}",
        started.elapsed()
    );

    let refused: Vec<&String> = acked.iter().flat_map(|(_, a)| &a.refused).collect();
    assert!(
        refused.is_empty(),
        "answers that were neither success nor name_taken on a retry: {refused:?}"
    );
    let remembered: usize = acked.iter().map(|(_, a)| a.remembered.len()).sum();
    let lost: usize = acked.iter().map(|(_, a)| a.lost).sum();
    let committed: usize = acked.iter().map(|(_, a)| a.committed_unacknowledged).sum();
    eprintln!(
        "{kills} SIGKILLs (a node down {down:.1?} in all); {remembered} of {} remembers \
         acknowledged; {lost} requests cut off and sent again ({committed} remembers had \
         committed before the kill), in {:.1?}",
        2 * WRITERS * writes,
        started.elapsed()
    );
    assert_eq!(remembered, 2 * WRITERS * writes);
    assert!(kills > 0, "no node was killed while the writers ran");
    assert!(lost > 0, "no request was cut off by a kill");

    // The database itself: each name once, versions 1..=n, the acknowledged edits.
    let mut db = postgres::Client::connect(&admin, postgres::NoTls).unwrap();
    let rows = db
        .query(
            "SELECT m.name, m.version, m.body, array_agg(v.version ORDER BY v.version), count(*) OVER (PARTITION BY m.name),
                    (SELECT body FROM loci_memory.memory_versions f WHERE f.memory_id = m.id AND f.version = 1)
             FROM loci_memory.memories m JOIN loci_memory.memory_versions v ON v.memory_id = m.id
             GROUP BY m.id",
            &[],
        )
        .unwrap();
    let mut stored: BTreeMap<String, (i32, String, String)> = BTreeMap::new();
    for r in &rows {
        let name: String = r.get(0);
        let version: i32 = r.get(1);
        let versions: Vec<i32> = r.get(3);
        let copies: i64 = r.get(4);
        assert_eq!(copies, 1, "{name} is stored {copies} times");
        assert_eq!(
            versions,
            (1..=version).collect::<Vec<_>>(),
            "{name}'s versions"
        );
        stored.insert(name, (version, r.get(2), r.get(5)));
    }
    let edited: HashSet<&String> = acked.iter().flat_map(|(_, a)| &a.edited).collect();
    let mut present = 0;
    for (name, sent) in acked.iter().flat_map(|(_, a)| &a.remembered) {
        let (version, body, first) = stored
            .get(name)
            .unwrap_or_else(|| panic!("acknowledged {name} is missing"));
        present += 1;
        assert_eq!(first, sent, "{name}'s first version");
        if edited.contains(name) {
            assert!(
                *version >= 2 && body.starts_with("Edited by"),
                "{name}: v{version} {body:?}"
            );
        } else {
            assert_eq!((*version, body), (1, sent), "{name}");
        }
    }
    assert_eq!(stored.len(), present, "memories stored that no writer sent");
    eprintln!("{present} memories present exactly once, each with its edit");

    // Through the other node: every tenth acknowledged write is read there, and a
    // recall of its unique token finds it.
    for (n, a) in &mut acked {
        let other = &nodes[1 - *n];
        for (name, _) in a.remembered.iter().step_by(10) {
            let (status, v) = other.post_answered("read", &json!({"name": name}));
            assert_eq!(status, 200, "{name} through node {}: {v}", 1 - *n);
            let token = token(name);
            let (status, hits) = other.post_answered("recall", &json!({"query": token}));
            assert_eq!(status, 200, "{hits}");
            assert_eq!(
                hits["hits"][0]["name"],
                name.as_str(),
                "recall {token}: {hits}"
            );
        }
    }
}

/// A word only memory `name`'s body holds, for recall to find it by.
fn token(name: &str) -> String {
    format!("tok{}", name.replace('-', "x"))
}

fn seed() -> u64 {
    let t = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_nanos() as u64;
    eprintln!("kill schedule seed {t}");
    t | 1
}

/// xorshift64.
fn next(s: &mut u64) -> u64 {
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    *s
}
