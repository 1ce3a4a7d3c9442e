"""Times hook calls as an agent that starts processes cheaply (Codex, in Rust) would: each command hook
is a process started with posix_spawn/vfork, the event on stdin, its stdout and stderr read. bench/shim.ts
runs this next to its own timings from Node, where starting any process costs far more.

    python3 bench/shim-spawn.py SAMPLES EVENT_FILE TOKEN_FILE URL SHIM SCRIPT

Alternates, per sample: a direct HTTP call (one kept-alive connection, as an http hook), /bin/true
(the floor under every command hook), the shim, and the script form. Prints the medians as JSON (ms).
"""
import http.client
import json
import statistics
import subprocess
import sys
import time
from urllib.parse import urlsplit

samples, event_file, token_file, url, shim, script = int(sys.argv[1]), *sys.argv[2:7]
event = open(event_file, 'rb').read()
token = open(token_file).read().strip()
parts = urlsplit(url)
conn = http.client.HTTPConnection(parts.hostname, parts.port)
headers = {'content-type': 'application/json', 'authorization': f'Bearer {token}'}


def direct():
    start = time.perf_counter()
    conn.request('POST', parts.path, body=event, headers=headers)
    answer = conn.getresponse()
    answer.read()
    if answer.status >= 300:
        raise SystemExit(f'the front door answered {answer.status}')
    return (time.perf_counter() - start) * 1000


def started(argv):
    def run():
        start = time.perf_counter()
        done = subprocess.run(argv, input=event, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        if done.returncode != 0:
            raise SystemExit(f'{argv[0]} exited with {done.returncode}: {done.stderr.decode()}')
        return (time.perf_counter() - start) * 1000
    return run


ways = {
    'http': direct,
    'empty': started(['/bin/true']),
    'shim': started([shim, '--token-file', token_file, url]),
    'script': started([script, '--token-file', token_file, url]),
}
times = {name: [] for name in ways}
for way in ways.values():
    way()
for _ in range(samples):
    for name, way in ways.items():
        times[name].append(way())
print(json.dumps({name: statistics.median_low(values) for name, values in times.items()}))
