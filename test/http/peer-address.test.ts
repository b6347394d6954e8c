// The peer of a request on a loopback-bound listener is known without a getpeername per request
// (src/http/peer-address.ts, SPEC G-3), and on every other bind address it is still the socket's.
import { describe, expect, test } from "bun:test";
import { loopbackPeerOf, peerAddressReader } from "../../src/http/peer-address.ts";
import { isLoopback } from "../../pipeline/context.ts";

const req = new Request("http://127.0.0.1/v1/chat/completions", { method: "POST" });

/** A server stand-in that counts how often the socket is asked and answers `address`. */
function counting(address: string) {
  const asked = { n: 0 };
  return { asked, server: { requestIP: () => (asked.n++, { address }) } };
}

describe("loopbackPeerOf", () => {
  test("loopback IP literals: every 127.x and ::1 (bracketed too)", () => {
    expect(loopbackPeerOf("127.0.0.1")).toBe("127.0.0.1");
    expect(loopbackPeerOf("127.1.2.3")).toBe("127.0.0.1");
    expect(loopbackPeerOf("::1")).toBe("::1");
    expect(loopbackPeerOf("[::1]")).toBe("::1");
    expect(loopbackPeerOf("0:0:0:0:0:0:0:1")).toBe("::1");
  });
  test("anything else asks the socket: wildcards, LAN addresses, host names, malformed literals", () => {
    for (const host of ["0.0.0.0", "::", "192.168.1.10", "10.0.0.1", "localhost", "127.0.0.256", "127.0.0", "127.0.0.1.5", "127.a.0.1", "::ffff:127.0.0.1", "", undefined]) {
      expect(loopbackPeerOf(host)).toBeUndefined();
    }
  });
  test("what it answers is loopback to the guard's rule", () => {
    expect(isLoopback(loopbackPeerOf("127.9.9.9"))).toBe(true);
    expect(isLoopback(loopbackPeerOf("::1"))).toBe(true);
  });
});

describe("peerAddressReader", () => {
  test("a loopback-bound listener never asks the socket", () => {
    const read = peerAddressReader("127.0.0.1");
    const { asked, server } = counting("10.1.2.3");
    for (let i = 0; i < 5; i++) expect(read(req, server)).toBe("127.0.0.1");
    expect(asked.n).toBe(0);
  });
  test("a wildcard bind asks the socket on every request and passes its answer on", () => {
    const read = peerAddressReader("0.0.0.0");
    const { asked, server } = counting("192.168.1.7");
    expect(read(req, server)).toBe("192.168.1.7");
    expect(read(req, server)).toBe("192.168.1.7");
    expect(asked.n).toBe(2);
  });
  test("no server (app.handle): no peer on either kind of bind, so the request is not taken as local", () => {
    expect(peerAddressReader("127.0.0.1")(req, null)).toBeUndefined();
    expect(peerAddressReader("0.0.0.0")(req, null)).toBeUndefined();
    expect(peerAddressReader(undefined)(req, undefined)).toBeUndefined();
  });
});
