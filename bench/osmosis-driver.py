#!/usr/bin/env python3
"""S2 on the real thing: `rollout-test serve` driven by osmosis-sdk-python's own `HttpRolloutDriver` and
`CallbackListener` (a `CallbackStore` with a no-op commit hook), 64 rollouts in flight, as its eval runner drives a
server. No-op rollouts (the S1/S2 suite); a warm-up at the same pace, then the measured rollouts. Prints serve's
CPU per measured rollout (user + system, every thread, from /proc) and the Python controller's.

Not part of `npm run bench`: it needs a checkout of osmosis-sdk-python (e.g. from a `git archive` of it) and a
Python with httpx, FastAPI and uvicorn. Its package `__init__` files need Python 3.12 (PEP 695 generics), so on an
older Python the driver's modules are imported without them, as namespace packages.

  python3 bench/osmosis-driver.py --osmosis DIR [--checkout .] [--rollouts 2000] [--warmup 2000]
"""
import argparse
import asyncio
import os
import re
import subprocess
import sys
import tempfile
import threading
import time
import types

CONCURRENCY = 64
NOOP = """export class Noop {
  async run(ctx) { return ctx.prompt; }
}
export const always = () => 1;
"""
ROLLOUT_FILE = """import { defineRollout } from 'rollout-test';
import { Noop, always } from './noop.js';
defineRollout({ name: 'noop', workflow: Noop, grader: always });
"""


def import_osmosis(root):
    """osmosis's driver, listener and store, their packages' `__init__` files skipped (see the top)."""
    sys.path.insert(0, root)
    for name in ['osmosis_ai', 'osmosis_ai.rollout', 'osmosis_ai.rollout.controller', 'osmosis_ai.rollout.utils']:
        package = types.ModuleType(name)
        package.__path__ = [os.path.join(root, *name.split('.'))]
        sys.modules.setdefault(name, package)
    from osmosis_ai.rollout.controller.listener import CallbackListener
    from osmosis_ai.rollout.controller.store import CallbackStore
    from osmosis_ai.rollout.driver import RolloutRunRequest
    from osmosis_ai.rollout.http_driver import HttpRolloutDriver
    return HttpRolloutDriver, CallbackListener, CallbackStore, RolloutRunRequest


def cpu_seconds(pid):
    fields = open(f'/proc/{pid}/stat').read().rsplit(')', 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf('SC_CLK_TCK')


def start_serve(checkout, project):
    """`rollout-test serve` on the no-op suite, in `project` (rollout-test linked to `checkout`); its process and URL."""
    for name, text in [('noop.js', NOOP), ('noop.rollout.js', ROLLOUT_FILE), ('package.json', '{"type":"module","private":true}')]:
        with open(os.path.join(project, name), 'w') as file:
            file.write(text)
    os.makedirs(os.path.join(project, 'node_modules'))
    os.symlink(os.path.abspath(checkout), os.path.join(project, 'node_modules', 'rollout-test'))
    command = ['node', os.path.join(checkout, 'bin/rollout-test.js'), 'serve', '--port', '0', '--max-concurrency', str(CONCURRENCY), '--outputDir', 'out', 'noop.rollout.js']
    serve = subprocess.Popen(command, cwd=project, stderr=subprocess.PIPE, text=True, env={**os.environ, 'CI': 'true'})
    for line in serve.stderr:
        found = re.search(r'listening on (\S+)', line)
        if found:
            # Read on, so that serve never blocks on a full pipe.
            threading.Thread(target=lambda: serve.stderr.read(), daemon=True).start()
            return serve, found.group(1)
    raise RuntimeError(f'serve exited with {serve.wait()} before listening')


async def drive(osmosis, url, pid, count, warmup):
    HttpRolloutDriver, CallbackListener, CallbackStore, RolloutRunRequest = osmosis

    async def commit(_result):
        return None

    store = CallbackStore(on_terminal_commit=commit)
    listener = CallbackListener(store, auth_token='controller-token')
    await listener.start()
    driver = HttpRolloutDriver(rollout_base_url=url, callback_store=store, completion_url_for=listener.completion_url,
                               grader_url_for=listener.grader_url, chat_completions_url_for=listener.chat_completions_url,
                               chat_api_key='bridge-token', controller_api_key='controller-token')

    async def phase(prefix, n):
        rows = iter(range(n))

        async def lane():
            for i in rows:
                await driver.run(RolloutRunRequest(messages=[{'role': 'user', 'content': f'row {i}'}], label=f'row {i}', rollout_id=f'{prefix}-{i}'))

        await asyncio.gather(*(lane() for _ in range(CONCURRENCY)))

    try:
        await phase('warm-up', warmup)
        serve_before, own_before, started = cpu_seconds(pid), time.process_time(), time.perf_counter()
        await phase('measured', count)
        elapsed = time.perf_counter() - started
        serve_us = 1e6 * (cpu_seconds(pid) - serve_before) / count
        own_us = 1e6 * (time.process_time() - own_before) / count
        print(f'{count} rollouts after {warmup} of warm-up in {elapsed:.1f} s ({count / elapsed:.0f}/s): serve {serve_us:.0f} us of CPU per rollout, the Python controller {own_us:.0f} us')
    finally:
        await driver.aclose()
        await listener.stop()


def main():
    options = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    options.add_argument('--osmosis', required=True, help='a checkout of osmosis-sdk-python')
    options.add_argument('--checkout', default='.', help='a built checkout of rollout-test')
    options.add_argument('--rollouts', type=int, default=2000)
    options.add_argument('--warmup', type=int, default=2000)
    args = options.parse_args()
    osmosis = import_osmosis(os.path.abspath(args.osmosis))
    with tempfile.TemporaryDirectory(prefix='osmosis-driver-') as project:
        serve, url = start_serve(os.path.abspath(args.checkout), project)
        try:
            asyncio.run(drive(osmosis, url, serve.pid, args.rollouts, args.warmup))
        finally:
            serve.terminate()
            serve.wait()


if __name__ == '__main__':
    main()
