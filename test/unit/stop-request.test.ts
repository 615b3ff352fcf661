import { describe, expect, it } from "vitest";
import { isStopRequest } from "../../src/engine/message-router.js";

describe("a message that only says stop", () => {
  it("stops, whatever the case, punctuation or politeness", () => {
    for (const text of ["stop", "Stop.", "STOP!", "please stop", "Stop, please!", "/stop", "  stop  ", "cancel turn", "Cancel turn."]) {
      expect(isStopRequest(text), text).toBe(true);
    }
  });

  it("is not a stop when it says anything more: that is a request, or an answer", () => {
    for (const text of ["stop the deploy", "don't stop", "stop stop", "bus stop 4", "stopping", "", "please", "non-stop"]) {
      expect(isStopRequest(text), text).toBe(false);
    }
  });
});
