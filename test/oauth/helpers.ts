/**
 * Shared set-up of the subscription tests: a fake upstream, a fake vendor (OAuth + subscription APIs)
 * in front of it, and a real switchyard instance whose `cc` and `cx` providers point at the vendor;
 * plus the admin-API call the CLI commands use.
 */
import { statSync } from "node:fs";
import { join } from "node:path";
import { startFakeUpstream, type FakeUpstream } from "../support/fake-upstream.ts";
import { startGateway, type TestGateway } from "../support/gateway.ts";
import type { AdminCall, CliIo } from "../../src/cli/routing.ts";
import { startFakeVendor, vendorProviders, type FakeVendor } from "./fake-oauth.ts";

export interface SubscriptionWorld {
  gw: TestGateway;
  vendor: FakeVendor;
  upstream: FakeUpstream;
  call: AdminCall;
  /** Lines the CLI commands printed (stdout). */
  out: string[];
  io: CliIo;
  stop(): Promise<void>;
}

/** An admin-API caller like main.ts's (throws with the server's message on an error status). */
export function adminCall(url: string, token: string): AdminCall {
  return async (method, path, body) => {
    const res = await fetch(`${url}/admin/api${path}`, {
      method,
      headers: { "content-type": "application/json", authorization: `Bearer ${token}` },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await res.text();
    const data = text ? JSON.parse(text) : undefined;
    if (!res.ok) throw new Error(`error ${res.status}: ${data?.error?.message ?? text}`);
    return data;
  };
}

/**
 * Starts the world. `extraYaml` is appended to the providers block (more providers' items, then
 * accounts, combos, settings); as a function it is given the vendor's URL (e.g. fake-oauth.ts's `claudeCodePools`).
 */
export async function startWorld(extraYaml: string | ((vendorUrl: string) => string) = "", opts: { dataDir?: string; upstream?: FakeUpstream; vendor?: FakeVendor } = {}): Promise<SubscriptionWorld> {
  const upstream = opts.upstream ?? (await startFakeUpstream());
  const vendor = opts.vendor ?? (await startFakeVendor(upstream));
  const yaml = vendorProviders(vendor.url, { codexRedirect: "http://127.0.0.1:0/auth/callback" }) + (typeof extraYaml === "function" ? extraYaml(vendor.url) : extraYaml);
  const gw = await startGateway(yaml, { fake: upstream, dataDir: opts.dataDir });
  const out: string[] = [];
  const io: CliIo = {
    out: (l) => void out.push(l),
    fail: (l) => {
      throw new Error(typeof l === "string" ? l : l.join("\n"));
    },
  };
  return {
    gw,
    vendor,
    upstream,
    call: adminCall(gw.url, gw.app.adminToken),
    out,
    io,
    async stop() {
      await gw.stop();
      await vendor.stop();
    },
  };
}

/** Mode bits of the database file (SPEC: 0600, it holds tokens). */
export function dbMode(dataDir: string): number {
  return statSync(join(dataDir, "switchyard.db")).mode & 0o777;
}

/** Waits until `cond` holds or `ms` pass. */
export async function until(cond: () => boolean | Promise<boolean>, ms = 3000): Promise<void> {
  const end = Date.now() + ms;
  while (!(await cond())) {
    if (Date.now() > end) throw new Error("condition not met in time");
    await Bun.sleep(10);
  }
}
