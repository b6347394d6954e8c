/**
 * Creates at the same moment of names a person cannot tell apart (src/config/lookalike-names.ts: the
 * same after Unicode NFC, or then differing only in case). The admin API's check used to read the
 * names in memory while the write of an earlier create was not re-read yet, so `Fast` and `fast`
 * created at once were both answered 201 (session 44's tryout). Now the admin API runs its
 * configuration changes one at a time (src/admin/config-writer.ts), and the store's create checks the
 * stored names in the same step as its insert, so instances sharing a PostgreSQL store refuse each
 * other's look-alikes too: of 20 such creates, exactly one is 201 and the 19 others are 409 naming it.
 * Client keys whose names differ only in case (their own rule, POST /keys) likewise (the store's
 * createKey checks the active names under a lock per lower-cased name). On PostgreSQL the old
 * code answered several of the 20 with 201 (each test below failed); on one SQLite instance it already
 * answered one (its writes have no wait between the check and the re-read), which these tests keep.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { startGateway, type TestGateway } from "../support/gateway.ts";
import { providersAtFake } from "../support/configs.ts";
import { startInstance, stopInstance, type Instance } from "../support/instance.ts";
import { startPostgres, type TestPostgres } from "../support/postgres.ts";

/**
 * 20 distinct spellings of one name: `first` + "äst" with a precomposed ä (U+00E4) or a + U+0308, in
 * several cases ("fäst", "Fäst", "fÄst", …, "fa\u0308st", …). Each pair is the same to a reader; no two
 * are the same string.
 */
const variants = (first: string): string[] => {
  const out: string[] = [];
  for (const a of ["\u00e4", "a\u0308"]) {
    for (let mask = 0; mask < 16; mask++) out.push([first, a, "s", "t"].map((l, i) => (mask & (1 << i) ? l.toUpperCase() : l)).join(""));
  }
  return [...out.slice(0, 10), ...out.slice(16, 26)];
};

/** One create: a combo for even i, an alias for odd i (the two kinds share their names). */
const create = (url: string, name: string, i: number) =>
  fetch(`${url}/admin/api/${i % 2 ? "aliases" : "combos"}`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(i % 2 ? { name, target: "p/model-x" } : { name, targets: [{ model: "p/model-x" }] }),
  });

/** What the admin API lists as stored (source db), combos and aliases together. */
const storedNames = async (url: string) => {
  const combos = ((await (await fetch(`${url}/admin/api/combos`)).json()) as any).combos;
  const aliases = ((await (await fetch(`${url}/admin/api/aliases`)).json()) as any).aliases;
  return [...combos, ...aliases].filter((o: any) => o.source === "db").map((o: any) => o.name as string);
};

/** Fires the 20 creates at once (request i at `urls[i % urls.length]`) and checks: one 201, 19 409 naming the one. */
async function raceAndCheck(urls: string[], first: string): Promise<void> {
  const VARIANTS = variants(first);
  expect(new Set(VARIANTS).size).toBe(20);
  expect(new Set(VARIANTS.map((n) => n.normalize("NFC").toLowerCase())).size).toBe(1);
  const replies = await Promise.all(VARIANTS.map((n, i) => create(urls[i % urls.length]!, n, i)));
  const bodies = (await Promise.all(replies.map((r) => r.json()))) as any[];
  const statuses = replies.map((r) => r.status);
  expect(statuses.filter((s) => s === 201)).toHaveLength(1);
  expect(statuses.filter((s) => s === 409)).toHaveLength(19);
  const w = statuses.indexOf(201);
  const winner = VARIANTS[w]!;
  expect(bodies[w].name).toBe(winner);
  const kind = w % 2 ? "alias" : "combo";
  for (const [i, body] of bodies.entries()) {
    if (i === w) continue;
    const n = VARIANTS[i]!;
    const how = n.normalize("NFC") === winner.normalize("NFC") ? "looks identical to" : "differs only in case from";
    expect(body.error.message).toStartWith(`The name ${JSON.stringify(n)} ${how} the ${kind} ${JSON.stringify(winner)} (`);
    expect(body.error.param).toBe("name");
  }
  for (const url of urls) expect((await storedNames(url)).filter((n) => n.normalize("NFC").toLowerCase() === VARIANTS[0]!.normalize("NFC").toLowerCase())).toEqual([winner]);
}

/** Fires 10 key creates at once whose names differ only in case (request i at `urls[i % urls.length]`): one 201, 9 409 naming the one. */
async function keysRaceAndCheck(urls: string[], first = "ci"): Promise<void> {
  const names = ["ci-Bot", "ci-bot", "CI-BOT", "Ci-Bot", "ci-BOT", "CI-bot", "cI-bOt", "Ci-bOT", "ci-boT", "CI-Bot"].map((n) => first.slice(0, 2).split("").map((c, i) => (n[i] === n[i]!.toUpperCase() ? c.toUpperCase() : c)).join("") + n.slice(2));
  const replies = await Promise.all(names.map((name, i) => fetch(`${urls[i % urls.length]}/admin/api/keys`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ name }) })));
  const statuses = replies.map((r) => r.status);
  expect(statuses.filter((s) => s === 201)).toHaveLength(1);
  expect(statuses.filter((s) => s === 409)).toHaveLength(names.length - 1);
  const winner = names[statuses.indexOf(201)]!;
  for (const [i, r] of replies.entries()) {
    if (statuses[i] === 201) continue;
    expect(((await r.json()) as any).error.message).toBe(`a key named ${JSON.stringify(winner)} already exists (names differ only in case): choose another name`);
  }
  for (const url of urls) {
    const keys = ((await (await fetch(`${url}/admin/api/keys`)).json()) as any).keys.map((k: any) => k.name as string);
    expect(keys.filter((k: string) => k.toLowerCase() === winner.toLowerCase())).toEqual([winner]);
  }
}

describe("20 creates at once of combo and alias names that read as one: one 201, 19 409", () => {
  describe("one instance on SQLite", () => {
    let gw: TestGateway;
    beforeAll(async () => {
      gw = await startGateway(`${providersAtFake(["p", "openai"])}\naccounts:\n  - { id: p-1, provider: p, api_key: env:FAKE_KEY }\n`);
    });
    afterAll(async () => {
      await gw?.stop();
    });

    test("combos and aliases", async () => {
      await raceAndCheck([gw.url], "f");
    });

    test("client keys differing only in case", async () => {
      await keysRaceAndCheck([gw.url]);
    });
  });

  describe("two instances sharing PostgreSQL", () => {
    let pg: TestPostgres | undefined;
    let a: Instance | undefined;
    let b: Instance | undefined;
    beforeAll(async () => {
      pg = await startPostgres();
      const db = await pg.createDatabase("lookalike_race");
      const yaml = `providers:\n  - { id: p, kind: openai, base_url: "http://127.0.0.1:9/v1" }\naccounts:\n  - { id: p-1, provider: p, api_key: env:P_KEY }\n`;
      const start = () => startInstance({ yaml, env: { P_KEY: "sk-test-account-p" }, args: ["--database", db], timeoutMs: 90_000 });
      [a, b] = await Promise.all([start(), start()]);
    }, 200_000);
    afterAll(async () => {
      await Promise.all([stopInstance(a), stopInstance(b)]);
      await pg?.destroy();
    });

    test("combos and aliases, all at one instance", async () => {
      await raceAndCheck([a!.url], "f");
    }, 30_000);

    test("combos and aliases, the creates split between the two", async () => {
      await raceAndCheck([a!.url, b!.url], "b");
    }, 30_000);

    test("client keys differing only in case, all at one instance", async () => {
      await keysRaceAndCheck([a!.url]);
    }, 30_000);

    test("client keys differing only in case, the creates split between the two", async () => {
      await keysRaceAndCheck([a!.url, b!.url], "bo");
    }, 30_000);
  });
});
