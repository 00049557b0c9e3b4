#!/bin/sh
# mpirun's remote shell (--mca plm_rsh_agent) for tests/python/test_launch.py: every host name is
# this machine, so that mpirun runs one daemon per named host, as on separate servers. Called as
# `launch_agent.sh HOST COMMAND...`; each host's daemon keeps its session files in a folder of its
# own, as it would on its own server. Faults, by host:
#   CROSSBOW_TEST_UNREACHABLE="h1 h2": as ssh to a host that does not answer (exit 255);
#   CROSSBOW_TEST_PRIVATE_HOST=h, CROSSBOW_TEST_PRIVATE_DIR=D: h sees its own empty D (a folder
#     that is not shared), through a mount namespace with a tmpfs over D.
host=$1
shift
for unreachable in ${CROSSBOW_TEST_UNREACHABLE:-}; do
  if [ "$unreachable" = "$host" ]; then
    echo "ssh: connect to host $host port 22: No route to host" >&2
    exit 255
  fi
done
case "$*" in
  *orte_tmpdir_base*)  # mpirun's own folder (crossbow launch's probes): a subfolder of it
    command=$(printf '%s' "$*" | sed "s#orte_tmpdir_base \"\{0,1\}\([^\" ]*\)\"\{0,1\}#orte_tmpdir_base \1/$host#") ;;
  *)
    command="$* -mca orte_tmpdir_base ${TMPDIR:-/tmp}/crossbow-agent-$(id -u)/$host" ;;
esac
if [ "$host" = "${CROSSBOW_TEST_PRIVATE_HOST:-}" ]; then
  exec unshare -m sh -c 'mount -t tmpfs none "$0" && exec sh -c "$1"' \
    "$CROSSBOW_TEST_PRIVATE_DIR" "$command"
fi
exec sh -c "$command"
