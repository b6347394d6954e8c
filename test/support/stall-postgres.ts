/**
 * Pauses a throwaway PostgreSQL cluster (test/support/postgres.ts) as a stalled database looks to its
 * clients: its postmaster and every child (backends, checkpointer, …) stopped with SIGSTOP, so their
 * sockets stay open and nothing answers (a team-operator tryout's stall). Resume always, in a `finally`.
 */
import { spawnSync } from "node:child_process";
import type { TestPostgres } from "./postgres.ts";

/** The cluster's processes now: the postmaster and its children. */
function clusterPids(pg: TestPostgres): number[] {
  const pm = pg.pid();
  if (!pm) return [];
  const kids = spawnSync("pgrep", ["-P", String(pm)], { encoding: "utf8" }).stdout.split("\n").filter(Boolean).map(Number);
  return [pm, ...kids];
}

/** A pause of `pg`'s processes; `resume()` sends SIGCONT to them (and to any child started meanwhile). Never throws. */
export interface Stall {
  resume(): void;
}

/** Stops every process of the cluster with SIGSTOP. */
export function stallPostgres(pg: TestPostgres): Stall {
  const paused = clusterPids(pg);
  for (const pid of paused) process.kill(pid, "SIGSTOP");
  return {
    resume() {
      for (const pid of new Set([...paused, ...clusterPids(pg)])) {
        try {
          process.kill(pid, "SIGCONT");
        } catch {
          // gone
        }
      }
    },
  };
}
