#!/usr/bin/env python3
"""The rig program's commands as a user runs them: test-cli.py RIG CASE.

info         `rig info` prints its table with the host's row and exits 0
info-json    `rig info --json` is JSON, with the facts of each device
info-device  `rig info memory:x` and its --json give that device's facts
help         `rig --help` and each `rig CMD --help` describe the commands
bad-args     a bad argument exits 2 and names what was wrong
bench-help   `rig bench --help` names its groups; a bad group exits 2
profile-errors `rig profile` of a program that cannot run or is killed
             says so once, with no guess after it
info-machine `rig info --machine m1=ADDR:PORT --key FILE`, with a `rig serve`
             started for it, lists m1's host and memory device (and --json);
             a wrong key and a bad NAME=ADDR:PORT exit 1 saying why
install      installs the build under a temporary DESTDIR with its drivers,
             no test driver, and runs the installed `rig bench pingpong
             create`: pingpong is skipped saying it needs the test driver,
             create runs (BUILD_ROOT is the third argument)
"""
import json
import os
import pathlib
import subprocess
import sys
import tempfile
import time


def run(cmd, env=None, want=0):
    p = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=300)
    if p.returncode != want:
        sys.exit(f"{' '.join(cmd)}: exit {p.returncode}, not {want}\n"
                 f"stdout:\n{p.stdout}\nstderr:\n{p.stderr}")
    return p


def expect(cond, what, text=""):
    if not cond:
        sys.exit(f"FAIL: {what}\n{text}")


def case_info(rig):
    out = run([rig, "info"]).stdout
    head = out.splitlines()[2].split()
    expect(head[:4] == ["DEVICE", "TYPE", "MODEL", "DRIVER"], "the table's heading", out)
    for col in ("VERSION", "ARCH", "TOTAL", "IN", "USE", "BUDGET"):
        expect(col in head, f"a column {col}", out)
    host = out.splitlines()[3].split()
    expect(host[1] == "cpu" and "unlimited" in host, "the host's row: cpu, budget unlimited", out)
    expect("memory:" in out and "memory" in out, "a memory device's row", out)
    # The io row is a scratch file's: rig_device_list lists io as opening
    # no device by name, and the count is of the devices that do.
    rows = [l.split() for l in out.split("\n\n")[1].splitlines()[1:]]
    counted = int(out.split(": ", 1)[1].split()[0])
    expect(counted == len([r for r in rows if r[1] != "io"]),
           "the count is of the rows other than io", out)
    print(out)


def case_profile_errors(rig):
    """One error each, and no guess after it: a program that cannot run
    (127), one killed before its exit wrote the profile (128 + 9)."""
    with tempfile.TemporaryDirectory() as tmp:
        trace = os.path.join(tmp, "p.json")
        err = run([rig, "profile", "-o", trace, "--", "/no/such/program"], want=127).stderr
        expect("cannot run /no/such/program: No such file or directory" in err, "why", err)
        expect("librig-core" not in err and len(err.splitlines()) == 1, "no guess after", err)
        err = run([rig, "profile", "-o", trace, "--", "sh", "-c", "kill -9 $$"],
                  want=137).stderr
        expect("ended by signal 9" in err and "does it use librig-core" not in err,
               "a killed program: the signal, no guess", err)


def case_info_json(rig):
    text = run([rig, "info", "--json"]).stdout
    doc = json.loads(text)
    expect(doc["rig_version"] and doc["devices"], "rig_version and devices", text)
    for d in doc["devices"]:
        for key in ("name", "type", "driver", "driver_version", "arch", "memory_total",
                    "memory_in_use", "budget", "capabilities"):
            expect(key in d, f"{d.get('name')}: the fact {key}", text)
    expect(doc["devices"][0]["type"] == "cpu", "the host first, of type cpu", text)
    expect(doc["devices"][0]["budget"] is None, "the host's budget null (unlimited)", text)
    for u in doc["unavailable"]:
        expect(u["reason"] in ("no plugin", "no library", "bad plugin", "no device"), "a reason in a word", text)
        expect(u["message"], "the open's message", text)
    vk = [d for d in doc["devices"] if d["driver"] == "vulkan"]
    for d in vk:  # where lavapipe or a GPU is here
        cap = d["capabilities"]["vulkan.device"]
        expect(cap["name"] == d["model"] and cap["memory"] == d["memory_total"],
               "vulkan.device's record is the row's model and memory", text)
    print(text)


def case_info_device(rig):
    out = run([rig, "info", "memory:x"]).stdout
    lines = {l.split(None, 1)[0]: l.split(None, 1)[1] for l in out.splitlines()[1:] if l.strip()}
    expect(out.startswith("memory:x\n"), "the device's name first", out)
    expect("type" in lines and lines["type"].strip() == "memory", "type memory", out)
    doc = json.loads(run([rig, "info", "--json", "memory:x"]).stdout)
    expect(doc["name"] == "memory:x" and doc["driver"] == "memory" and doc["memory_in_use"] == 0,
           "the JSON's name, driver and memory in use", str(doc))
    err = run([rig, "info", "nosuchdriver:0"], want=1).stderr
    expect("nosuchdriver:0 does not open (no plugin)" in err, "why a device does not open", err)
    print(out)


def case_help(rig):
    out = run([rig, "--help"]).stdout
    for cmd in ("info", "demo", "bench"):
        expect(f"  {cmd} " in out, f"--help lists {cmd}", out)
        sub = run([rig, cmd, "--help"]).stdout
        expect(sub.startswith(f"usage: rig {cmd}"), f"rig {cmd} --help's usage", sub)
    expect(run([rig, "--version"]).stdout.startswith("rig "), "--version")


def case_bad_args(rig):
    cases = [([], "no command given"), (["frob"], "no command 'frob'"),
             (["info", "--bogus"], "no option '--bogus'"),
             (["info", "a", "b"], "one device at a time"),
             (["demo", "x"], "takes no argument, not 'x'"),
             (["bench", "nope"], "no group 'nope'")]
    for args, msg in cases:
        err = run([rig] + args, want=2).stderr
        expect(msg in err, f"rig {' '.join(args)}: says {msg!r}", err)


def case_bench_help(rig):
    out = run([rig, "bench", "--help"]).stdout
    expect(out.startswith("usage: rig bench [GROUP...]"), "the usage", out)
    for g in ("create", "copy", "io", "launch", "pingpong", "stress"):
        expect(g in out, f"the group {g}", out)


def start_server(rig, key, log=subprocess.DEVNULL):
    """A `rig serve` on a free loopback port, its stderr to log; returns it
    and its address."""
    srv = subprocess.Popen([rig, "serve", "--listen", "127.0.0.1:0", "--key", key],
                           stdout=subprocess.PIPE, stderr=log, text=True)
    line = srv.stdout.readline()
    prefix = "rig serve: listening on "
    if not line.startswith(prefix):
        srv.kill()
        sys.exit(f"FAIL: rig serve said {line!r}")
    return srv, line[len(prefix):].strip()


def case_info_machine(rig):
    with tempfile.TemporaryDirectory() as tmp:
        key, wrong = os.path.join(tmp, "key"), os.path.join(tmp, "wrong")
        pathlib.Path(key).write_text("the cli test's shared secret")
        pathlib.Path(wrong).write_text("not the secret")
        os.chmod(key, 0o600)
        os.chmod(wrong, 0o600)
        log_path = os.path.join(tmp, "serve.log")
        log = open(log_path, "w")
        srv, addr = start_server(rig, key, log)
        try:
            out = run([rig, "info", "--machine", f"m1={addr}", "--key", key]).stdout
            # A client that exits is logged in words a person can act on, not UCX's.
            text = ""
            for _ in range(50):
                text = pathlib.Path(log_path).read_text()
                if "disconnected" in text:
                    break
                time.sleep(0.1)
            expect("disconnected: connection closed by the client" in text
                   and "Endpoint" not in text, "the server says the client left", text)
            expect("devices open on machine m1" in out, "the heading names the machine", out)
            rows = {line.split()[0]: line.split() for line in out.splitlines()[2:] if line}
            expect("CPU@m1" in rows and rows["CPU@m1"][1] == "remote", "the host's row", out)
            expect("memory:0@m1" in rows and "memory" in rows["memory:0@m1"], "m1's memory:0", out)
            doc = json.loads(run([rig, "info", "--json", "--machine", f"m1={addr}",
                                  "--key", key]).stdout)
            names = [d["name"] for d in doc["devices"]]
            expect(names[0] == "CPU@m1" and "memory:0@m1" in names, "--json's devices", names)
            mem = doc["devices"][names.index("memory:0@m1")]
            expect(mem["arch"] == "memory" and mem["alignment"] == 64, "m1's facts", mem)
            err = run([rig, "info", "--machine", f"m2={addr}", "--key", wrong], want=1).stderr
            expect("does not hold the key" in err, "a wrong key says so", err)
        finally:
            srv.terminate()
            srv.wait(timeout=30)
            log.close()
        err = run([rig, "info", "--machine", f"m1={addr}", "--key", key], want=1).stderr
        expect("connection refused" in err and addr in err and "Endpoint" not in err,
               "no server at the address: connection refused", err)
        err = run([rig, "info", "--machine", "no-address", "--key", key], want=1).stderr
        expect("NAME=ADDR:PORT" in err, "a bad --machine says what it takes", err)
        err = run([rig, "info", "--machine", "m3=x:1"], want=2).stderr
        expect("takes --key FILE" in err, "--machine without --key", err)


def listening(pid):
    """The addresses process pid listens on over TCP, as "HEX-ADDR:HEX-PORT"
    of /proc/net/tcp and tcp6 (the sockets whose inodes its fds name)."""
    inodes = set()
    for fd in pathlib.Path(f"/proc/{pid}/fd").iterdir():
        try:
            target = os.readlink(fd)
        except OSError:
            continue
        if target.startswith("socket:["):
            inodes.add(target[8:-1])
    found = []
    for table in ("tcp", "tcp6"):
        for line in pathlib.Path(f"/proc/{pid}/net/{table}").read_text().splitlines()[1:]:
            f = line.split()
            if f[3] == "0A" and f[9] in inodes:  # LISTEN
                found.append(f[1])
    return found


def case_serve(rig):
    """rig serve: UCX listens on the listen address's device only (unless
    UCX_NET_DEVICES says otherwise), --help's default port is the one it
    takes, and a key file others can read is refused, by it and by a client."""
    with tempfile.TemporaryDirectory() as tmp:
        key = os.path.join(tmp, "key")
        pathlib.Path(key).write_text("the cli test's shared secret")
        os.chmod(key, 0o600)
        srv, addr = start_server(rig, key)
        try:
            time.sleep(0.5)  # UCX's transports start listening with the context
            socks = listening(srv.pid)
            expect(len(socks) >= 1 and all(a.startswith("0100007F:") for a in socks),
                   "every socket it listens on is 127.0.0.1's", str(socks))
            os.chmod(key, 0o644)
            err = run([rig, "info", "--machine", f"m1={addr}", "--key", key], want=1).stderr
            expect("permissions 0644" in err and "chmod 600" in err,
                   "a client refuses a key file others can read", err)
        finally:
            srv.terminate()
            srv.wait(timeout=30)
        err = run([rig, "serve", "--listen", "127.0.0.1:0", "--key", key], want=1).stderr
        expect("permissions 0644 let others read it; chmod 600 it" in err,
               "rig serve refuses a key file others can read", err)
        os.chmod(key, 0o600)
        help_text = run([rig, "serve", "--help"]).stdout
        expect("127.0.0.1:13370 by default" in help_text and "UCX_NET_DEVICES" in help_text
               and "chmod 600" in help_text, "rig serve --help", help_text)
        # With no --listen it listens where --help says (unless another holds the port).
        plain = subprocess.Popen([rig, "serve", "--key", key], stdout=subprocess.PIPE,
                                 stderr=subprocess.PIPE, text=True)
        try:
            line = plain.stdout.readline()
        finally:
            plain.terminate()
            err = plain.communicate(timeout=30)[1]
        expect(line == "rig serve: listening on 127.0.0.1:13370\n"
               or "cannot listen on 127.0.0.1:13370" in err, "the default port", line + err)


def case_install(rig, build):
    with tempfile.TemporaryDirectory() as dest:
        run(["meson", "install", "-C", build, "--no-rebuild", "--quiet", "--tags", "runtime",
             "--destdir", dest])
        root = pathlib.Path(dest)
        rigs = list(root.glob("**/bin/rig"))
        expect(len(rigs) == 1, "one installed rig", str(rigs))
        drivers = [str(p.parent) for p in root.glob("**/rig/drivers/librig-driver-memory.so")]
        libs = [str(p.parent) for p in root.glob("**/librig-core.so*")]
        expect(drivers and libs, "the installed memory driver and librig-core")
        # No RIG_ settings, and no MALLOC_PERTURB_ (meson test sets it), which
        # would fill each of the anchor's 1 MiB mallocs.
        env = {k: v for k, v in os.environ.items()
               if not k.startswith("RIG_") and k != "MALLOC_PERTURB_"}
        env["RIG_DRIVER_PATH"] = drivers[0]
        env["LD_LIBRARY_PATH"] = libs[0]
        p = run([str(rigs[0]), "bench", "pingpong", "create"], env=env)
        expect("skipped: needs the test driver" in p.stdout, "pingpong skipped, saying why",
               p.stdout)
        expect("create+release memory 256 B" in p.stdout, "create's rows", p.stdout)
        print(p.stdout)


def main():
    rig, case = sys.argv[1], sys.argv[2]
    if case == "install":
        case_install(rig, sys.argv[3])
    else:
        globals()["case_" + case.replace("-", "_")](rig)


main()
