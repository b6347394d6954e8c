/**
 * The error an official SDK's call throws when the gateway refuses it (test helper): the call's
 * rejection, or a thrown error failing the test when the call succeeded.
 */
export async function refusal(p: Promise<unknown>): Promise<any> {
  try {
    await p;
  } catch (e) {
    return e;
  }
  throw new Error("the request was not refused");
}
