#!/usr/bin/env python3
"""Where an idle `loci mcp`'s resident pages come from: which mappings, which sections of
the binary, which crates' code, and what touched them.

    scripts/mcp-pages.py [--loci target/release/loci] [--tree DIR] [--top 25] [--no-perf]

Starts `loci mcp` on an indexed tree (default: tokio's sources from the cargo registry,
indexed into a temp dir), runs what the bench's idle figure runs (`initialize`,
`notifications/initialized`, `tools/list`, half a second idle), then reads:
- `/proc/PID/smaps`: resident, anonymous and private kilobytes per mapping;
- `/proc/PID/pagemap` over the binary's mappings: which of its pages are present, each
  mapped through its file offset to the ELF section (`readelf -S`) and, in `.text`,
  `.rodata` and `.data.rel.ro`, to the symbols on it (`nm -n -S`), grouped by crate
  (the first path segment of the demangled name);
- with perf (default): every page fault the process took (`perf record -e page-faults
  -c 1 -d`), each faulting address and the code that faulted, by section and crate. A
  fault on a file page also maps its neighbours already in the page cache (the
  kernel's fault-around, 64 KiB by default), so the present pages outnumber the faults:
  the faults say what start-up touched, the present pages what it costs.

Prints one JSON document. Needs root (pagemap's frame bits are not needed, only the
present bit, but perf's page-fault event on another process needs privileges).
"""

import argparse
import bisect
import collections
import glob
import json
import os
import re
import shutil
import struct
import subprocess
import sys
import tempfile
import time

PAGE = 4096
INIT = {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "pages", "version": "1"}}


def sections(binary):
    """(name, vaddr, file offset, size) of every allocated section."""
    out = []
    for line in subprocess.run(["readelf", "-SW", binary], capture_output=True, text=True, check=True).stdout.splitlines():
        m = re.match(r"\s*\[\s*\d+\]\s+(\S+)\s+(\S+)\s+([0-9a-f]+)\s+([0-9a-f]+)\s+([0-9a-f]+)\s+\S+\s+(\S*)", line)
        if not m or "A" not in m.group(6):
            continue
        name, typ, addr, off, size = m.group(1), m.group(2), int(m.group(3), 16), int(m.group(4), 16), int(m.group(5), 16)
        if typ == "NOBITS" or size == 0:
            continue
        out.append((name, addr, off, size))
    return out


def symbols(binary):
    """Sorted (vaddr, size, demangled name) of the binary's sized symbols."""
    out = []
    res = subprocess.run(["nm", "-n", "-S", "--demangle", binary], capture_output=True, text=True, check=True)
    for line in res.stdout.splitlines():
        parts = line.split(" ", 3)
        if len(parts) < 4:
            continue
        try:
            out.append((int(parts[0], 16), int(parts[1], 16), parts[3]))
        except ValueError:
            continue
    out.sort()
    return out


CRATE = re.compile(r"([A-Za-z_][A-Za-z0-9_]*)::")


def crate_of(name):
    """The crate a symbol is from, roughly: the first `x::` path segment (for a
    generic instance, the crate of the type it is instantiated on); C symbols by
    prefix."""
    n = name.lstrip("<&*")
    n = re.sub(r"^(mut |dyn |impl )", "", n)
    m = CRATE.match(n) or CRATE.search(n)
    if m:
        return m.group(1)
    if n.startswith("ts_") or n.startswith("tree_sitter") or n.startswith("lex_") or "language" in n:
        return "tree-sitter (C)"
    if n.startswith("sqlite3") or n.startswith("sqlite"):
        return "sqlite (C)"
    if n.startswith("mi_") or n.startswith("_mi_"):
        return "mimalloc (C)"
    return "other C/asm"


class SymIndex:
    def __init__(self, syms):
        self.syms = syms
        self.starts = [s[0] for s in syms]

    def covering(self, lo, hi):
        """Symbols overlapping [lo, hi) with the bytes of the overlap."""
        i = max(0, bisect.bisect_right(self.starts, lo) - 1)
        # Walk back over large symbols that started earlier and still overlap.
        j = i
        while j > 0 and self.syms[j - 1][0] + self.syms[j - 1][1] > lo and j > i - 64:
            j -= 1
        out = []
        k = j
        while k < len(self.syms) and self.syms[k][0] < hi:
            a, sz, name = self.syms[k]
            ov = min(hi, a + sz) - max(lo, a)
            if ov > 0:
                out.append((name, ov))
            k += 1
        return out

    def at(self, addr):
        i = bisect.bisect_right(self.starts, addr) - 1
        while i >= 0:
            a, sz, name = self.syms[i]
            if a <= addr < a + max(sz, 1):
                return name
            if a + sz < addr - (1 << 20):
                break
            i -= 1
        return None


def binary_vmas(pid, binary):
    """(start, end, file offset, perms) of the mappings of the binary itself."""
    real = os.path.realpath(binary)
    out = []
    with open(f"/proc/{pid}/maps") as f:
        for line in f:
            parts = line.split()
            if len(parts) >= 6 and os.path.realpath(parts[5]) == real:
                lo, hi = (int(x, 16) for x in parts[0].split("-"))
                out.append((lo, hi, int(parts[2], 16), parts[1]))
    return out


def present_pages(pid, vmas):
    """File offsets of the binary's pages present in this process (pagemap bit 63)."""
    out = []
    with open(f"/proc/{pid}/pagemap", "rb") as f:
        for lo, hi, off, perms in vmas:
            n = (hi - lo) // PAGE
            f.seek(lo // PAGE * 8)
            data = f.read(n * 8)
            for i in range(n):
                (entry,) = struct.unpack_from("<Q", data, i * 8)
                if entry >> 63 & 1:
                    out.append((off + i * PAGE, perms))
    return out


def smaps(pid):
    """Per mapping (name, perms): Rss, Anonymous, Private_* and Pss kilobytes."""
    by = collections.OrderedDict()
    key = None
    with open(f"/proc/{pid}/smaps") as f:
        for line in f:
            parts = line.split()
            if "-" in parts[0] and not parts[0].endswith(":"):
                name = parts[5] if len(parts) > 5 else "[anon]"
                name = os.path.basename(name) if name.startswith("/") else name
                key = f"{name} {parts[1]}"
                by.setdefault(key, collections.Counter())
            elif parts[0] in ("Rss:", "Pss:", "Anonymous:", "Private_Clean:", "Private_Dirty:", "Shared_Clean:"):
                by[key][parts[0][:-1]] += int(parts[1])
    return {k: dict(v) for k, v in by.items() if v.get("Rss")}


def rollup(pid):
    out = {}
    with open(f"/proc/{pid}/smaps_rollup") as f:
        for line in f:
            parts = line.split()
            if parts[0] in ("Rss:", "Pss:", "Anonymous:", "Private_Clean:", "Private_Dirty:", "Shared_Clean:"):
                out[parts[0][:-1]] = int(parts[1])
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("Threads:"):
                out["Threads"] = int(line.split()[1])
    return out


def section_of(secs, file_off):
    for name, addr, off, size in secs:
        if off <= file_off < off + size:
            return name, addr + (file_off - off)
    return "(headers/padding)", None


def top(counter, n):
    return {k: round(v / 1024, 1) for k, v in counter.most_common(n)}


def child_pid(parent, deadline=5.0):
    end = time.time() + deadline
    while time.time() < end:
        for t in glob.glob(f"/proc/{parent}/task/*/children"):
            with open(t) as f:
                kids = f.read().split()
            if kids:
                return int(kids[0])
        time.sleep(0.01)
    raise SystemExit("loci mcp did not start under perf")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--loci", default="target/release/loci")
    ap.add_argument("--tree", default=None)
    ap.add_argument("--top", type=int, default=25)
    ap.add_argument("--no-perf", action="store_true")
    args = ap.parse_args()
    loci = os.path.abspath(args.loci)
    tree = args.tree or sorted(glob.glob(os.path.expanduser("~/.cargo/registry/src/*/tokio-1.*")))[-1]
    home = tempfile.mkdtemp(prefix="loci-pages-")
    env = dict(os.environ, LOCI_HOME=home, XDG_CONFIG_HOME=os.path.join(home, "xdg"))
    for var in ("LOCI_LOG", "LOCI_SESSION_ID"):
        env.pop(var, None)
    index = os.path.join(home, "index.db")
    subprocess.run([loci, "index", tree, "--index-path", index, "--json"], env=env, check=True, stdout=subprocess.DEVNULL)
    # Warm the page cache (the figure is the warm one, as every session after the first).
    for _ in range(2):
        subprocess.run([loci, "--version"], stdout=subprocess.DEVNULL)

    perf_data = os.path.join(home, "perf.data")
    cmd = [loci, "mcp", "--workspace", tree]
    if not args.no_perf:
        cmd = ["perf", "record", "-q", "-e", "page-faults", "-c", "1", "-d", "-o", perf_data, "--"] + cmd
    p = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env)
    pid = p.pid if args.no_perf else child_pid(p.pid)

    def request(i, method, params=None):
        msg = {"jsonrpc": "2.0", "id": i, "method": method}
        if params is not None:
            msg["params"] = params
        p.stdin.write((json.dumps(msg) + "\n").encode())
        p.stdin.flush()
        while True:
            line = p.stdout.readline()
            if not line:
                raise SystemExit(f"loci mcp closed its output during {method}")
            if json.loads(line).get("id") == i:
                return

    request(1, "initialize", INIT)
    p.stdin.write(b'{"jsonrpc":"2.0","method":"notifications/initialized"}\n')
    p.stdin.flush()
    request(2, "tools/list")
    time.sleep(0.5)

    out = {"binary": loci, "tree": tree, "rollup_kb": rollup(pid), "smaps_kb": smaps(pid)}
    secs = sections(loci)
    vmas = binary_vmas(pid, loci)
    pages = present_pages(pid, vmas)
    base = min(lo - off for lo, hi, off, perms in vmas)
    p.stdin.close()
    p.wait(timeout=20)

    syms = SymIndex(symbols(loci))
    by_section = collections.Counter()
    by_crate = {".text": collections.Counter(), ".rodata": collections.Counter(), ".data.rel.ro": collections.Counter()}
    for file_off, perms in pages:
        name, vaddr = section_of(secs, file_off)
        by_section[name] += PAGE
        if name in by_crate and vaddr is not None:
            cover = syms.covering(vaddr, vaddr + PAGE)
            covered = sum(b for _, b in cover)
            for sym, b in cover:
                by_crate[name][crate_of(sym)] += b
            if covered < PAGE:
                by_crate[name]["(no symbol)"] += PAGE - covered
    out["binary_present_kb"] = len(pages) * PAGE // 1024
    out["binary_present_by_section_kb"] = top(by_section, 40)
    out["binary_present_by_crate_kb"] = {k: top(v, args.top) for k, v in by_crate.items()}

    if not args.no_perf:
        script = subprocess.run(["perf", "script", "-i", perf_data, "-F", "ip,addr"], capture_output=True, text=True)
        faults_by_section = collections.Counter()
        faulter_by_crate = collections.Counter()
        faulted_by_crate = collections.Counter()
        text_faulters = collections.Counter()
        n = 0
        for line in script.stdout.splitlines():
            parts = line.split()
            if len(parts) < 2:
                continue
            try:
                addr, ip = int(parts[0], 16), int(parts[1], 16)
            except ValueError:
                continue
            n += 1
            link_addr = addr - base
            sec = next((s for s in secs if s[1] <= link_addr < s[1] + s[3]), None)
            if sec is None:
                faults_by_section["(not the binary: heap, stacks, libc, files)"] += 1
                continue
            faults_by_section[sec[0]] += 1
            who = syms.at(ip - base) or "(outside the binary)"
            faulter_by_crate[crate_of(who)] += 1
            what = syms.at(link_addr)
            if what:
                faulted_by_crate[f"{sec[0]} {crate_of(what)}"] += 1
                if sec[0] == ".text":
                    text_faulters[what[:140]] += 1
        out["faults"] = n
        out["faults_by_section"] = dict(faults_by_section.most_common(30))
        out["binary_faults_by_faulting_code_crate"] = dict(faulter_by_crate.most_common(args.top))
        out["binary_faults_by_faulted_symbol_crate"] = dict(faulted_by_crate.most_common(args.top * 2))
        out["text_faults_first_symbol_sample"] = dict(text_faulters.most_common(args.top * 2))
    shutil.rmtree(home, ignore_errors=True)
    print(json.dumps(out, indent=1))


if __name__ == "__main__":
    sys.exit(main())
