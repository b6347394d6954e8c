import { describe, expect, test } from "bun:test";
import { EventBus, type GatewayEvent } from "../../src/events/bus.ts";

const alert = (subject: string): GatewayEvent => ({ type: "alert", event: "account_locked", at: 1, subject, detail: {} });

describe("EventBus", () => {
  test("delivers to every subscriber in order until it unsubscribes", () => {
    const bus = new EventBus();
    const seen: string[] = [];
    const offA = bus.subscribe((e) => seen.push(`a:${(e as { subject: string }).subject}`));
    bus.subscribe((e) => seen.push(`b:${(e as { subject: string }).subject}`));
    expect(bus.active).toBe(true);
    bus.publish(alert("x"));
    offA();
    bus.publish(alert("y"));
    expect(seen).toEqual(["a:x", "b:x", "b:y"]);
  });

  test("a subscriber that throws does not stop the others", () => {
    const bus = new EventBus();
    const seen: string[] = [];
    const err = console.error;
    console.error = () => {};
    try {
      bus.subscribe(() => {
        throw new Error("boom");
      });
      bus.subscribe((e) => seen.push(e.type));
      bus.publish(alert("x"));
    } finally {
      console.error = err;
    }
    expect(seen).toEqual(["alert"]);
  });

  test("no subscriber: inactive", () => {
    const bus = new EventBus();
    expect(bus.active).toBe(false);
    bus.publish(alert("x"));
  });

  test("a subscriber of some types gets only those, and wants() counts it only for them", () => {
    const bus = new EventBus();
    const seen: string[] = [];
    const off = bus.subscribe((e) => seen.push(e.type), ["alert"]);
    expect(bus.wants("alert")).toBe(true);
    expect(bus.wants("request_finished")).toBe(false);
    bus.publish({ type: "account_state", at: 1, account: "a", change: "lock" });
    bus.publish(alert("x"));
    expect(seen).toEqual(["alert"]);
    const offAll = bus.subscribe(() => {});
    expect(bus.wants("request_finished")).toBe(true);
    offAll();
    offAll();
    off();
    expect([bus.wants("alert"), bus.wants("request_finished"), bus.active]).toEqual([false, false, false]);
  });
});
