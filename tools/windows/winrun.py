"""winrun.py LOG ARGS...: run `python ARGS` with its output in the file LOG, and exit
with its status. For python.exe under Wine (tools/windows_wine.sh): Wine 8 hands a
Windows program no usable standard handles for Linux pipes or files (python.exe
fails with "init_sys_streams ... Invalid handle"), so the script runs this under a
pty and this starts the real command with a Windows file as its output."""
import subprocess
import sys

log, args = sys.argv[1], sys.argv[2:]
with open(log, "wb") as f:
    rc = subprocess.call([sys.executable, *args], stdout=f, stderr=subprocess.STDOUT,
                         stdin=subprocess.DEVNULL)
sys.exit(rc)
