/**
 * A gateway bound to 127.0.0.1 asks the socket for every request's peer (SPEC G-3: the loopback
 * exemption rests on the socket's peer; G-1/G-2: a remote caller needs a key). A loopback-bound socket
 * does get non-loopback peers: on Linux a connection to 127.0.0.1 from a non-loopback source address is
 * accepted (from the host's own LAN address always; from other machines when
 * `net.ipv4.conf.*.route_localnet=1`, which kube-proxy set on nodes, CVE-2020-8558, or when a DNAT rule
 * forwards to 127.0.0.1), and the socket reports that source.
 *
 * Found by a review in session 46: a change that took every peer of a loopback-bound listener as
 * loopback without asking the socket (to save a getpeername per request) served `GET /v1/models` from
 * source 192.0.2.2 without a key (200 instead of 401); it was reverted (docs/performance.md item 331).
 * Needs a non-loopback IPv4 address on the machine (skipped without one).
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { networkInterfaces } from "node:os";
import { startGateway, type TestGateway } from "../support/gateway.ts";
import { fakeProviders } from "../support/configs.ts";
import { exchange } from "../support/raw-http.ts";

const lan = Object.values(networkInterfaces())
  .flat()
  .find((a) => a !== undefined && a.family === "IPv4" && !a.internal)?.address;

let gw: TestGateway;
beforeAll(async () => {
  gw = await startGateway(`
server:
  host: 127.0.0.1
${fakeProviders([["oai", "openai"]])}`);
});
afterAll(async () => {
  await gw?.stop();
});

/** The status of `GET path` sent to the gateway's 127.0.0.1 port from source address `from`. */
async function statusFrom(from: string, path: string): Promise<number> {
  return (await exchange(gw.url, `GET ${path} HTTP/1.1\r\nHost: 127.0.0.1:${new URL(gw.url).port}\r\nConnection: close\r\n\r\n`, { from })).status;
}

test.skipIf(lan === undefined)("a peer the socket reports as non-loopback is not exempt on a 127.0.0.1 listener", async () => {
  // the same requests from 127.0.0.1 are served (loopback exemption), as they should be
  expect(await statusFrom("127.0.0.1", "/v1/models")).toBe(200);
  expect(await statusFrom(lan!, "/v1/models")).toBe(401);
});
