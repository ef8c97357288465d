#!/usr/bin/env node
// Summarizes .cpuprofile files (node --cpu-prof): self time by function and by package/file, and the
// inclusive ("total") time of the heaviest frames. Usage: node bench/profile-summary.mjs <file|dir>... [--top N]
import { readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';

const args = process.argv.slice(2);
const topAt = args.indexOf('--top');
const top = topAt >= 0 ? Number(args.splice(topAt, 2)[1]) : 25;
const files = args.flatMap((a) => (statSync(a).isDirectory() ? readdirSync(a).filter((f) => f.endsWith('.cpuprofile')).map((f) => path.join(a, f)) : [a]));

function where(url) {
  if (!url) return '(native)';
  const nm = url.lastIndexOf('node_modules/');
  if (nm >= 0) {
    const rest = url.slice(nm + 13).split('/');
    return rest[0].startsWith('@') ? `${rest[0]}/${rest[1]}` : rest[0];
  }
  if (url.startsWith('node:')) return url;
  const src = url.match(/\/(dist|src)\/(.*)$/);
  return src ? `rollout-test/${src[2]}` : url.replace(/^file:\/\//, '');
}

for (const file of files) {
  const profile = JSON.parse(readFileSync(file, 'utf8'));
  const nodes = new Map(profile.nodes.map((n) => [n.id, n]));
  const dt = new Map();
  for (let i = 0; i < profile.samples.length; i++) dt.set(profile.samples[i], (dt.get(profile.samples[i]) ?? 0) + (profile.timeDeltas[i] ?? 0));
  const parent = new Map();
  for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  const self = new Map();
  const byWhere = new Map();
  const total = new Map();
  let all = 0;
  for (const [id, us] of dt) {
    const n = nodes.get(id);
    const cf = n.callFrame;
    const name = `${cf.functionName || '(anonymous)'} ${where(cf.url)}:${cf.lineNumber + 1}`;
    self.set(name, (self.get(name) ?? 0) + us);
    const w = cf.url ? where(cf.url) : cf.functionName;
    byWhere.set(w, (byWhere.get(w) ?? 0) + us);
    all += us;
    const seen = new Set();
    for (let p = id; p !== undefined; p = parent.get(p)) {
      const f = nodes.get(p).callFrame;
      const key = `${f.functionName || '(anonymous)'} ${where(f.url)}:${f.lineNumber + 1}`;
      if (seen.has(key)) continue;
      seen.add(key);
      total.set(key, (total.get(key) ?? 0) + us);
    }
  }
  const fmt = (us) => `${(us / 1000).toFixed(1).padStart(8)} ms ${((100 * us) / all).toFixed(1).padStart(5)}%`;
  const list = (m, n) => [...m].sort((a, b) => b[1] - a[1]).slice(0, n).map(([k, v]) => `  ${fmt(v)}  ${k}`).join('\n');
  console.log(`\n=== ${path.basename(file)}: ${(all / 1000).toFixed(0)} ms sampled`);
  console.log(`-- self time by package/file\n${list(byWhere, top)}`);
  console.log(`-- self time by function\n${list(self, top)}`);
  console.log(`-- total (inclusive) time by function\n${list(total, top)}`);
}
