/**
 * Effect, loaded on first use (issue 17: idle memory). A gateway without subscription accounts,
 * concurrency limits or an alert webhook never runs an Effect program, and evaluating Effect's modules
 * costs a plain start ~2 MB of anonymous memory (docs/performance.md item 33).
 * The modules that use Effect import only types statically and call {@link loadEffect} where their
 * work begins: a refresh round, the first wait on a limited account's slot, the first alert.
 */

/** The Effect modules (src/memory/effect-modules.ts). */
export type EffectModules = typeof import("./effect-modules.ts");

let loading: Promise<EffectModules> | undefined;
let loaded: EffectModules | undefined;

/** Loads the Effect modules (once; later calls return the same promise). Rejects only when they are missing from the install. */
export function loadEffect(): Promise<EffectModules> {
  loading ??= import("./effect-modules.ts").then((m) => (loaded = m));
  return loading;
}

/** The Effect modules when {@link loadEffect} has resolved, else undefined (for synchronous paths). */
export function effectIfLoaded(): EffectModules | undefined {
  return loaded;
}
