//! Hints that name what an MCP client can do. loci's errors carry one hint for every
//! front end, written as the CLI command that helps (`loci find '*part*'`); an agent
//! connected over MCP may have no shell, so each such command that a tool answers is
//! said as that tool call instead (`find {"pattern": "*part*"}`). Commands with no
//! tool (`loci index`, `loci models install`) are left as they are: they are what the
//! user runs.

use serde_json::{Value, json};

/// `hint` with every backquoted `loci ...` command that a tool answers turned into
/// that tool's call.
pub fn for_mcp(hint: &str) -> String {
    let mut out = String::with_capacity(hint.len());
    let mut rest = hint;
    while let Some(start) = rest.find("`loci ") {
        let Some(len) = rest[start + 1..].find('`') else {
            break;
        };
        let command = &rest[start + 1..start + 1 + len];
        out.push_str(&rest[..start]);
        match tool_call(command) {
            Some(call) => out.push_str(&format!("`{call}`")),
            None => out.push_str(&rest[start..start + len + 2]),
        }
        rest = &rest[start + len + 2..];
    }
    out.push_str(rest);
    out
}

/// The tool call that does what `command` (`loci find '*x*'`) does, if a tool does.
fn tool_call(command: &str) -> Option<String> {
    let words = split_words(command.strip_prefix("loci ")?)?;
    let (tool, args): (&str, Value) = match words.as_slice() {
        [cmd, pattern] if cmd == "find" => ("find", json!({"pattern": pattern})),
        [cmd, sql] if cmd == "query" => ("query", json!({"sql": sql})),
        [cmd, symbol] if cmd == "def" => ("symbol", json!({"symbol": symbol})),
        [cmd, target] if matches!(cmd.as_str(), "callers" | "callees" | "refs" | "impact") => {
            ("relations", json!({"target": target, "direction": cmd}))
        }
        [memory, action, name]
            if memory == "memory" && MEMORY_ACTIONS.contains(&action.as_str()) =>
        {
            ("memory", json!({"action": action, "name": name}))
        }
        [memory, action] if memory == "memory" && MEMORY_ACTIONS.contains(&action.as_str()) => {
            ("memory", json!({"action": action}))
        }
        [cmd] if cmd == "status" => ("status", json!({})),
        _ => return None,
    };
    Some(format!("{tool} {args}"))
}

/// The `memory` tool's actions a CLI `loci memory ACTION` maps to.
const MEMORY_ACTIONS: &[&str] = &[
    "read", "list", "edit", "rename", "forget", "restore", "history", "link", "unlink", "merge",
    "related", "entities", "stats",
];

/// The words of a command as a shell splits them (single and double quotes; no
/// escapes, no variables): `None` for anything else, which is then left as written.
fn split_words(text: &str) -> Option<Vec<String>> {
    let mut words = Vec::new();
    let mut chars = text.chars().peekable();
    while let Some(&c) = chars.peek() {
        if c == ' ' {
            chars.next();
            continue;
        }
        let mut word = String::new();
        while let Some(&c) = chars.peek() {
            match c {
                ' ' => break,
                '\'' | '"' => {
                    chars.next();
                    let mut closed = false;
                    for q in chars.by_ref() {
                        if q == c {
                            closed = true;
                            break;
                        }
                        word.push(q);
                    }
                    if !closed {
                        return None;
                    }
                }
                '$' | '\\' | '|' | '>' | '<' | '&' | ';' => return None,
                _ => {
                    word.push(c);
                    chars.next();
                }
            }
        }
        words.push(word);
    }
    Some(words)
}

#[cfg(test)]
mod tests {
    use super::for_mcp;

    #[test]
    fn commands_a_tool_answers_become_tool_calls_and_others_stay() {
        assert_eq!(
            for_mcp(
                "`loci find '*add_permits*'` lists definitions whose name contains `add_permits`"
            ),
            "`find {\"pattern\":\"*add_permits*\"}` lists definitions whose name contains `add_permits`"
        );
        assert_eq!(
            for_mcp("a; `loci query \"SELECT path FROM files\"` lists the indexed paths"),
            "a; `query {\"sql\":\"SELECT path FROM files\"}` lists the indexed paths"
        );
        assert_eq!(
            for_mcp("`loci memory restore retry-policy` brings it back"),
            "`memory {\"action\":\"restore\",\"name\":\"retry-policy\"}` brings it back"
        );
        assert_eq!(
            for_mcp("run `loci index` in the workspace first"),
            "run `loci index` in the workspace first"
        );
        assert_eq!(for_mcp("no command here"), "no command here");
        // Unbalanced quotes, shell syntax and an unclosed backquote are left as written.
        for odd in [
            "`loci find '*x` then",
            "`loci query \"a\" | less`",
            "`loci find x",
            "`loci find $X`",
        ] {
            assert_eq!(for_mcp(odd), odd);
        }
    }
}
