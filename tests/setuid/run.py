#!/usr/bin/env python3
"""run.py: a setuid program that uses rig never loads a plugin from its
caller's RIG_DRIVER_PATH (rig reads it with secure_getenv).

usage: run.py OPENER PLUGIN_DIR

As root it copies OPENER into a fresh folder, makes it setuid to an
unprivileged user (daemon, made with useradd where it is missing) and runs
it as another (nobody) with RIG_DRIVER_PATH naming PLUGIN_DIR, which holds
librig-driver-setuid.so: the plugin must not load. The same copy, not
setuid, run the same way, must load it: that shows the setup would see a
load. Skips (77) when not root or where the folder is mounted nosuid.
"""
import os
import pwd
import shutil
import stat
import subprocess
import sys
import tempfile

SKIP = 77
OWNER, CALLER = "daemon", "nobody"


def user(name):
    try:
        return pwd.getpwnam(name)
    except KeyError:
        subprocess.run(["useradd", "--system", "--no-create-home", "--shell",
                        "/usr/sbin/nologin", name], check=True)
        return pwd.getpwnam(name)


def run_as(caller, prog, plugin_dir, tmp):
    env = {"RIG_DRIVER_PATH": plugin_dir, "PATH": "/usr/bin:/bin",
           # LeakSanitizer cannot trace a setuid process; a leak is not
           # what this test looks for.
           "ASAN_OPTIONS": "detect_leaks=0"}
    cmd = ["setpriv", "--reuid", str(caller.pw_uid), "--regid", str(caller.pw_gid),
           "--clear-groups", prog]
    r = subprocess.run(cmd, env=env, cwd=tmp, capture_output=True, text=True, timeout=60)
    out = r.stdout + r.stderr
    print("$ %s (RIG_DRIVER_PATH=%s): exit %d\n%s" % (" ".join(cmd), plugin_dir,
                                                      r.returncode, out))
    return r.returncode, out


def main():
    opener, plugin_dir = sys.argv[1], os.path.abspath(sys.argv[2])
    if os.geteuid() != 0:
        print("skip: needs root, to make a program setuid to another user")
        return SKIP
    if os.environ.get("MESON_EXE_WRAPPER"):
        # The kernel runs an arm64 program under qemu-user only through
        # binfmt_misc, whose credentials flag alone would apply the setuid
        # bit: run by meson's wrapper, the program is never setuid.
        print("skip: under %s (a cross build's run) no program runs setuid" %
              os.environ["MESON_EXE_WRAPPER"])
        return SKIP
    if not shutil.which("setpriv"):
        print("skip: no setpriv (util-linux)")
        return SKIP
    tmp = tempfile.mkdtemp(prefix="rig-setuid-")
    try:
        if os.statvfs(tmp).f_flag & os.ST_NOSUID:
            print("skip: %s is mounted nosuid: no setuid program runs there" % tmp)
            return SKIP
        owner, caller = user(OWNER), user(CALLER)
        os.chmod(tmp, 0o755)
        # The plugin's folder, readable by the caller wherever the build is.
        plugins = os.path.join(tmp, "plugins")
        os.mkdir(plugins, 0o755)
        shutil.copy(os.path.join(plugin_dir, "librig-driver-setuid.so"), plugins)
        os.chmod(os.path.join(plugins, "librig-driver-setuid.so"), 0o755)
        prog = os.path.join(tmp, "opener")
        shutil.copy(opener, prog)
        os.chown(prog, owner.pw_uid, owner.pw_gid)

        os.chmod(prog, 0o755)                                  # not setuid
        rc, out = run_as(caller, prog, plugins, tmp)
        if rc != 0 or "PLUGIN LOADED" not in out:
            print("FAIL: the plain program did not load the plugin: the test sees nothing")
            return 1

        os.chmod(prog, 0o755 | stat.S_ISUID)                   # setuid to owner
        if not os.stat(prog).st_mode & stat.S_ISUID:
            print("skip: the setuid bit did not stay")
            return SKIP
        rc, out = run_as(caller, prog, plugins, tmp)
        if rc != 0:
            print("FAIL: the setuid program failed")
            return 1
        if "PLUGIN LOADED" in out:
            print("FAIL: a setuid program loaded a plugin from its caller's RIG_DRIVER_PATH")
            return 1
        if "RIG_UNAVAILABLE" not in out or "setuid" not in out:
            print("FAIL: the open did not say that a setuid program ignores RIG_DRIVER_PATH")
            return 1
        print("ok: the setuid program ignored RIG_DRIVER_PATH")
        return 0
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
