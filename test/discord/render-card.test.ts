import { ButtonBuilder, ButtonStyle } from "discord.js";
import { describe, expect, it } from "vitest";
import { checkMessagePayload } from "../../adapters/discord/check-payload.js";
import { renderCard } from "../../adapters/discord/render-card.js";
import { renderFormModal, renderTextModal } from "../../adapters/discord/render-modal.js";
import { renderSettledCard, settlementLine } from "../../adapters/discord/render-settlement.js";
import { asAskId } from "../../src/ports/ids.js";
import type { CardView } from "../../src/ports/platform-adapter.js";
import { messageErrors } from "../fakes/fake-discord-limits.js";
import { cardFor, DEADLINE } from "./card-fixtures.js";

type Row = { components: Array<{ type: number; custom_id: string; label?: string; options?: unknown[]; max_values?: number }> };
const rowsOf = (input: unknown) => renderCard(cardFor(input)).components as unknown as Row[];

describe("renderCard", () => {
  it("shows who may answer and a relative expiry, and always ends with Cancel, then Stop for the turn that waits", () => {
    const body = renderCard(cardFor({ type: "confirm", question: "Go?" }));
    expect(body.content).toContain(`<@111> or an admin can answer · expires <t:${DEADLINE / 1000}:R>`);
    expect(body.allowed_mentions).toEqual({ parse: [], users: ["111"] });
    const last = (card: CardView) =>
      (renderCard(card).components as unknown as Row[])
        .at(-1)!
        .components.slice(-2)
        .map((button) => [button.label, button.custom_id]);
    expect(last(cardFor({ type: "confirm", question: "Go?" }))).toEqual([
      ["Cancel", "ask:AbCdEfGhIjKl:cancel"],
      ["Stop", "stop:0b5e6c1e-8f7a-4a7e-9d57-5f1f2a3b4c5d"],
    ]);
    // An API ask has no turn to stop.
    expect(last(cardFor({ type: "confirm", question: "Go?" }, { offersStop: false }))).toEqual([
      ["No", "ask:AbCdEfGhIjKl:opt:1"],
      ["Cancel", "ask:AbCdEfGhIjKl:cancel"],
    ]);
  });

  it("says anyone in the thread can answer under the thread policy", () => {
    expect(renderCard(cardFor({ type: "confirm", question: "Go?" }, { answerers: [], anyoneInThread: true })).content).toContain(
      "Anyone in this thread can answer",
    );
  });

  it("draws 20 button options as 4 full rows, keeping the fifth row for Other…, Cancel and Stop", () => {
    const options = Array.from({ length: 20 }, (_, index) => `option ${index}`);
    const rows = rowsOf({ type: "buttons", question: "Pick", options });
    expect(rows.map((row) => row.components.length)).toEqual([5, 5, 5, 5, 3]);
    expect(rows[4]!.components.map((button) => button.label)).toEqual(["Other…", "Cancel", "Stop"]);
  });

  it("turns 21 button options into select menus instead of a sixth row", () => {
    const rows = rowsOf({ type: "buttons", question: "Pick", options: Array.from({ length: 21 }, (_, index) => `o${index}`) });
    expect(rows.map((row) => row.components[0]!.type)).toEqual([3, 2]);
  });

  it("fits 100 select options in 4 menus of 25 plus the button row", () => {
    const rows = rowsOf({ type: "select", question: "Pick", options: Array.from({ length: 100 }, (_, index) => `o${index}`) });
    expect(rows.map((row) => row.components[0]?.options?.length ?? row.components.length)).toEqual([25, 25, 25, 25, 3]);
  });

  it("a short select is drawn as buttons", () => {
    expect(rowsOf({ choices: ["yes", "no", "maybe"], question: "Well?" })[0]!.components.map((button) => button.label)).toEqual([
      "yes",
      "no",
      "maybe",
    ]);
  });

  it("lets a multiselect pick any number per menu, with Done", () => {
    const rows = rowsOf({ type: "multiselect", question: "Tags?", options: ["a", "b", "c"] });
    expect(rows[0]!.components[0]).toMatchObject({ min_values: 0, max_values: 3 });
    expect(rows[1]!.components.map((button) => button.label)).toEqual(["Done", "Cancel", "Stop"]);
  });

  it("cuts long labels to 80 characters and lists the full labels in the message", () => {
    const long = `${"very long option ".repeat(10)}end`;
    const body = renderCard(cardFor({ type: "buttons", question: "Pick", options: [long, "short"] }));
    const label = (body.components as unknown as Row[])[0]!.components[0]!.label!;
    expect(label).toHaveLength(80);
    expect(label.endsWith("…")).toBe(true);
    expect(body.content).toContain(`1. ${long}`);
  });

  it("keeps a 8,000-character question under 2,000 characters with the footer intact", () => {
    const body = renderCard(cardFor({ type: "input", question: "why? ".repeat(1600) }));
    expect(body.content.length).toBeLessThanOrEqual(2000);
    expect(body.content).toMatch(/expires <t:\d+:R>$/);
  });

  it("warns that passwords are visible and says when a form opens in several parts", () => {
    const fields = Array.from({ length: 11 }, (_, index) => ({ name: `f${index}`, type: index === 0 ? "password" : "text" }));
    const body = renderCard(cardFor({ type: "form", question: "Creds", fields }));
    expect(body.content).toContain("Discord does not mask passwords");
    expect(body.content).toContain("The form opens in 3 parts.");
  });
});

describe("modals", () => {
  it("a form part holds at most 5 fields, marks passwords as visible and offers toggles as Yes/No", () => {
    const fields = [
      { name: "secret", label: "API key", type: "password", required: true },
      { name: "verbose", label: "Verbose", type: "toggle" },
      ...Array.from({ length: 5 }, (_, index) => ({ name: `n${index}`, type: "number" })),
    ];
    const { spec } = cardFor({ type: "form", question: "Config", fields });
    const first = renderFormModal(asAskId("AbCdEfGhIjKl"), spec, 0, { secret: "hunter2", verbose: true });
    expect(first.title).toBe("Fill in (1/2)");
    expect(first.components).toHaveLength(5);
    const [password, toggle] = first.components as unknown as Array<{ description?: string; component: Record<string, unknown> }>;
    expect(password!.description).toContain("Discord does not mask it");
    expect(password!.component.value).toBeUndefined();
    expect(toggle!.component.options).toEqual([
      { label: "Yes", value: "yes", default: true },
      { label: "No", value: "no" },
    ]);
    expect(renderFormModal(asAskId("AbCdEfGhIjKl"), spec, 1).components).toHaveLength(2);
  });

  it("an input modal is prefilled with the default", () => {
    const { spec } = cardFor({ type: "input", question: "Name?", default: "Aurora" });
    const modal = renderTextModal(asAskId("AbCdEfGhIjKl"), spec, "text");
    expect((modal.components[0] as unknown as { component: { value: string; required: boolean } }).component).toMatchObject({
      value: "Aurora",
      required: false,
    });
  });
});

describe("settled cards", () => {
  it("show one outcome line and no components", () => {
    const card = cardFor({ type: "confirm", question: "Go?" });
    const settled = renderSettledCard(card, { status: "answered", answerText: "Yes", by: "111" });
    expect(settled).toMatchObject({ components: [], content: "Go?\n✅ Yes — answered by <@111>" });
    expect(settlementLine({ status: "cancelled", by: "9", byAdmin: true })).toBe("🚫 Cancelled by an admin, <@9>");
    expect(settlementLine({ status: "cancelled", by: "9", stopped: true })).toBe("⏹ Stopped by <@9>");
    expect(settlementLine({ status: "expired" })).toBe("⌛ Expired: nobody answered in time");
  });
});

describe("limits the builders do not check", () => {
  it("six buttons in a row pass the builders but not checkMessagePayload, nor the fake Discord", () => {
    const buttons = Array.from({ length: 6 }, (_, index) =>
      new ButtonBuilder().setCustomId(`b${index}`).setLabel(`B${index}`).setStyle(ButtonStyle.Primary).toJSON(),
    );
    const payload = { content: "x", components: [{ type: 1, components: buttons }] };
    expect(checkMessagePayload(payload)).toEqual(["row 1 has 6 buttons"]);
    expect(Object.keys(messageErrors(payload))).toEqual(["components.0.components"]);
  });

  it("a row mixing a button and a select is refused", () => {
    const select = { type: 3, custom_id: "s", options: [{ label: "a", value: "a" }] };
    const button = { type: 2, custom_id: "b", label: "b", style: 1 };
    expect(checkMessagePayload({ components: [{ type: 1, components: [button, select] }] })).toContain("row 1 mixes buttons and a select");
  });
});
