#!/usr/bin/python3
# Runs a command under the system-call filter deploy/systemd/slotrelay.service sets, without systemd:
#   SystemCallFilter=@system-service, SystemCallFilter=~@privileged, SystemCallErrorNumber=EPERM, NoNewPrivileges=yes,
#   SystemCallArchitectures=native, RestrictAddressFamilies=AF_INET AF_INET6 AF_UNIX (socket() of any other family
#   fails with EAFNOSUPPORT, as systemd does it).
# The sets are expanded by `systemd-analyze syscall-filter` (the same tables systemd applies), the filter is loaded
# with libseccomp (Debian's python3-seccomp: scripts/ci/ensure-syscall-filter.sh) and the command is exec'd under it,
# children inherited. Used by test/integration/deploy/sandboxed-relay.test.ts.
#
#   syscall-filter-exec.py COMMAND [ARGS...]
# Prints the number of allowed calls on stderr first ("syscall-filter: N calls allowed, M denied").
import errno
import os
import socket
import subprocess
import sys

import seccomp


def expand(group, seen=None):
    """The system calls of a group, its nested groups resolved, as systemd-analyze lists them."""
    seen = set() if seen is None else seen
    if group in seen:
        return set()
    seen.add(group)
    out = subprocess.run(['systemd-analyze', 'syscall-filter', group], check=True, capture_output=True, text=True).stdout
    calls = set()
    for line in out.splitlines()[1:]:
        name = line.strip()
        if not name or name.startswith('#'):
            continue
        calls |= expand(name, seen) if name.startswith('@') else {name}
    return calls


def main():
    if len(sys.argv) < 2:
        print('usage: syscall-filter-exec.py COMMAND [ARGS...]', file=sys.stderr)
        return 2
    allowed = expand('@system-service') - expand('@privileged')
    f = seccomp.SyscallFilter(defaction=seccomp.ERRNO(errno.EPERM))  # SystemCallErrorNumber=EPERM
    n = 0
    # RestrictAddressFamilies: socket() only for these families; the others EAFNOSUPPORT (socketpair: AF_UNIX only).
    allowed.discard('socket')
    for family in (socket.AF_UNIX, socket.AF_INET, socket.AF_INET6):
        f.add_rule(seccomp.ALLOW, 'socket', seccomp.Arg(0, seccomp.EQ, family))
    for family in range(46):  # AF_MAX on Linux 6.x is 46
        if family not in (socket.AF_UNIX, socket.AF_INET, socket.AF_INET6):
            f.add_rule(seccomp.ERRNO(errno.EAFNOSUPPORT), 'socket', seccomp.Arg(0, seccomp.EQ, family))
    for name in sorted(allowed):
        try:
            f.add_rule(seccomp.ALLOW, name)
            n += 1
        except (RuntimeError, ValueError):
            pass  # not a call on this architecture (e.g. the 32-bit *_time64 variants)
    f.set_attr(seccomp.Attr.CTL_NNP, 1)  # NoNewPrivileges=yes
    print(f'syscall-filter: {n} calls allowed, the rest fail with EPERM', file=sys.stderr, flush=True)
    f.load()
    os.execvp(sys.argv[1], sys.argv[1:])


sys.exit(main())
