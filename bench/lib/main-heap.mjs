// Preloaded (node --import) into a CLI run by bench/main-thread-gc.mjs: samples every allocation of the main thread
// (V8's sampling heap profiler, garbage included) and at exit appends its total in bytes to $MAIN_HEAP_OUT.
import { appendFileSync } from 'node:fs';
import { Session } from 'node:inspector';
import { isMainThread } from 'node:worker_threads';

if (isMainThread && process.env.MAIN_HEAP_OUT) {
  const session = new Session();
  session.connect();
  session.post('HeapProfiler.enable');
  session.post('HeapProfiler.startSampling', { samplingInterval: 4096, includeObjectsCollectedByMajorGC: true, includeObjectsCollectedByMinorGC: true });
  process.on('exit', () => {
    // The inspector answers a same-thread session synchronously.
    session.post('HeapProfiler.stopSampling', (error, result) => {
      if (error) throw error;
      let bytes = 0;
      const walk = (node) => {
        bytes += node.selfSize;
        for (const child of node.children) walk(child);
      };
      walk(result.profile.head);
      appendFileSync(process.env.MAIN_HEAP_OUT, `${JSON.stringify({ bytes })}\n`);
    });
  });
}
