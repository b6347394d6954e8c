/**
 * Self time of a `bun --cpu-prof` profile grouped by the project's modules and stages (issue 17): where
 * the in-process pipeline's CPU goes, by file rather than by function. Shared by scripts/bench-budget.ts
 * (its attribution table) and scripts/bench-profile.ts (`--groups`).
 *
 * Grouping of a sample's frame (its URL):
 * - `pipeline/<stage>.ts` and every other file of ours: `pipeline/<file>`, `formats/<folder>/` (a wire
 *   format) or `formats/<file>`, `src/<folder>/` or `src/<file>`, `scripts/` (the benchmark harness);
 * - `node_modules/<package>/…`: `node_modules/<package>`;
 * - Bun's built-in JavaScript (`node:…`, `bun:…`, `internal:…` URLs): one group;
 * - a native function (no URL: `JSON.stringify`, `TextEncoder.encode`, `new Response`, stream
 *   internals …) is charged to the nearest caller that has a URL, so "pipeline/commit.ts" includes the
 *   natives commit.ts calls; {@link ProfileGroups.native} says how much of the whole was native;
 * - samples with no JS frame of any kind (the profiler's root, idle event-loop waits): `(idle, no JS frame)`.
 * Garbage collection has no entry of its own in JavaScriptCore's sampling profiles: a sample taken
 * while the JS thread collects lands on the frame that allocated. (The budget's GC row measures it.)
 */

/** The parts of a `.cpuprofile` this reads (Chrome DevTools format, as `bun --cpu-prof` writes it). */
export interface CpuProfile {
  nodes: Array<{ id: number; callFrame: { functionName: string; url: string; lineNumber: number }; children?: number[] }>;
  /** µs since the epoch (Bun writes wall-clock time). */
  startTime: number;
  samples: number[];
  timeDeltas: number[];
}

/** Self time per group, µs, over the samples inside the window. */
export interface ProfileGroups {
  /** µs sampled inside the window. */
  total: number;
  /** µs whose sampled frame was a native function (charged to its caller's group). */
  native: number;
  /** group → µs, largest first. */
  groups: Array<[string, number]>;
}

/** The group of one frame URL; undefined for a native frame (no URL). `root` is the repository path. */
export function groupOf(url: string, root: string): string | undefined {
  if (!url) return undefined;
  if (/^(node|bun|internal):/.test(url)) return "Bun built-in JS (node:, bun:, internal:)";
  const path = url.replace(/^file:\/\//, "");
  const nm = path.match(/node_modules\/((?:@[^/]+\/)?[^/]+)\//);
  if (nm) return `node_modules/${nm[1]}`;
  const base = root.endsWith("/") ? root : root + "/";
  if (!path.startsWith(base)) return "other files";
  const rel = path.slice(base.length).split("/");
  if (rel[0] === "scripts") return "scripts/ (benchmark harness)";
  if (rel[0] === "pipeline") return rel.length === 2 ? `pipeline/${rel[1]}` : `pipeline/${rel[1]}/`;
  if (rel[0] === "formats" || rel[0] === "src") return rel.length === 2 ? `${rel[0]}/${rel[1]}` : `${rel[0]}/${rel[1]}/`;
  return rel.join("/");
}

/**
 * Groups a profile's self time ({@link groupOf}; natives charged to their nearest caller with a URL).
 * `window` (ms since the epoch, as `Date.now()`) keeps only the samples taken inside it, e.g. the
 * measured run without start-up and warm-up.
 */
export function profileGroups(profile: CpuProfile, root: string, window?: { from: number; to: number }): ProfileGroups {
  const byId = new Map<number, CpuProfile["nodes"][number]>();
  const parent = new Map<number, number>();
  for (const node of profile.nodes) {
    byId.set(node.id, node);
    for (const c of node.children ?? []) parent.set(c, node.id);
  }
  const groupCache = new Map<number, { group: string; native: boolean }>();
  const resolve = (id: number) => {
    let hit = groupCache.get(id);
    if (hit) return hit;
    const own = groupOf(byId.get(id)?.callFrame.url ?? "", root);
    let group = own;
    for (let cur = parent.get(id); group === undefined && cur !== undefined; cur = parent.get(cur)) group = groupOf(byId.get(cur)?.callFrame.url ?? "", root);
    hit = { group: group ?? "(idle, no JS frame)", native: own === undefined && group !== undefined };
    groupCache.set(id, hit);
    return hit;
  };
  const sums = new Map<string, number>();
  let total = 0;
  let native = 0;
  let t = profile.startTime;
  for (let i = 0; i < profile.samples.length; i++) {
    const dt = profile.timeDeltas[i] ?? 0;
    t += dt;
    if (window && (t < window.from * 1000 || t > window.to * 1000)) continue;
    const { group, native: isNative } = resolve(profile.samples[i]!);
    sums.set(group, (sums.get(group) ?? 0) + dt);
    total += dt;
    if (isNative) native += dt;
  }
  return { total, native, groups: [...sums].sort((a, b) => b[1] - a[1]) };
}
