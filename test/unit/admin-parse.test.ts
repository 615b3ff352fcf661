import { describe, expect, it } from "vitest";
import { parseCommand } from "../../src/admin/parse-command.js";

describe("parseCommand", () => {
  it("reads every command", () => {
    expect(parseCommand("")).toEqual({ ok: true, command: { name: "help" } });
    expect(parseCommand("help")).toEqual({ ok: true, command: { name: "help" } });
    expect(parseCommand("sessions")).toEqual({ ok: true, command: { name: "sessions", status: "waiting", page: 1 } });
    expect(parseCommand("sessions all --channel <#C123|general> --user <@U9> --page 2")).toEqual({
      ok: true,
      command: { name: "sessions", status: null, channel: "C123", user: "U9", page: 2 },
    });
    expect(parseCommand("sessions failed")).toMatchObject({ command: { status: "failed" } });
    expect(parseCommand("show S-1")).toEqual({ ok: true, command: { name: "show", sessionId: "S-1" } });
    expect(parseCommand("cancel abc_DEF")).toEqual({ ok: true, command: { name: "cancel", id: "abc_DEF" } });
    expect(parseCommand("answer A1 ship it  now")).toEqual({ ok: true, command: { name: "answer", askId: "A1", value: "ship it  now" } });
    expect(parseCommand("retry S1")).toEqual({ ok: true, command: { name: "retry", sessionId: "S1" } });
    expect(parseCommand("STATS")).toEqual({ ok: true, command: { name: "stats" } });
    expect(parseCommand("config")).toEqual({ ok: true, command: { name: "config" } });
    expect(parseCommand("config ask-budget 1")).toEqual({ ok: true, command: { name: "config", key: "ask-budget", value: "1" } });
    expect(parseCommand("purge --older-than 30")).toEqual({ ok: true, command: { name: "purge", olderThanDays: 30 } });
  });

  it("answers bad input with a usage line, never a throw", () => {
    expect(parseCommand("launch missiles")).toEqual({ ok: false, error: 'Unknown command "launch". Try /parley help.' });
    expect(parseCommand("show")).toEqual({ ok: false, error: "Give one session id. Usage: /parley show <session>" });
    expect(parseCommand("show '; DROP TABLE sessions; --")).toMatchObject({ ok: false });
    expect(parseCommand("answer A1")).toMatchObject({ ok: false, error: expect.stringContaining("Usage: /parley answer <ask> <value>") });
    expect(parseCommand("purge --older-than -3")).toMatchObject({ ok: false });
    expect(parseCommand("purge 3")).toMatchObject({ ok: false });
    expect(parseCommand("config api-key sk-123")).toMatchObject({ ok: false, error: expect.stringContaining('Unknown setting "api-key"') });
    expect(parseCommand("sessions sideways")).toMatchObject({ ok: false });
    expect(parseCommand("sessions --page 0")).toMatchObject({ ok: false });
    expect(parseCommand("stats now")).toMatchObject({ ok: false });
  });
});
