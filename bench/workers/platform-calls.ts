import { componentWith, ALICE as DISCORD_ALICE, DiscordHarness } from "../../test/discord/discord-harness.js";
import { ask, reply } from "../../test/fakes/fake-anthropic.js";
import { FAKE_BOT_USER_ID } from "../../test/fakes/fake-slack-api.js";
import { ALICE, SlackHarness, waitFor } from "../../test/slack/slack-harness.js";
import { CHANNEL, messageEvent, nextTs, tapCard } from "../../test/slack/slack-payloads.js";

// What an answered ask costs in platform calls: the real engine and adapters (Bolt, discord.js) against the test
// fakes. Each session asks QUESTIONS questions, each answered by a tap, then answers; every call made from the first
// tap to the final answer is counted, so the figure per answered ask covers the settle, the next card or the answer,
// and the status line. `modelMs` is how long each model step takes: a step over a second shows "Thinking…".
const sessions = Number(process.argv[2] ?? 10);
const modelMs = Number(process.argv[3] ?? 0);
const QUESTIONS = 3;

async function slack(): Promise<{ calls: number; byKind: Record<string, number> }> {
  const harness = await new SlackHarness().start();
  harness.slack.threadStatusRefusedIn.add(CHANNEL);
  harness.anthropic.delayMs = modelMs;
  const byKind: Record<string, number> = {};
  let calls = 0;
  try {
    for (let session = 0; session < sessions; session++) {
      const questions = Array.from({ length: QUESTIONS }, (_, index) => ask({ question: `Question ${index}?`, candidates: ["a", "b"] }));
      harness.anthropic.script(...questions, reply(`Done ${session}.`));
      const ts = nextTs();
      await harness.sender.event(messageEvent("app_mention", { user: ALICE, text: `<@${FAKE_BOT_USER_ID}> go`, ts }), {
        teamId: "T_PARLEY",
        eventId: `Ev-calls-${session}`,
      });
      await waitFor(() => hasCard(harness, ts, 1), "the first card", 60_000);
      const before = harness.slack.calls.length;
      for (let answered = 1; answered <= QUESTIONS; answered++) {
        const card = harness.card(ts);
        await tapCard(harness.sender, { card, thread: ts, user: ALICE, button: 1, responseUrl: harness.responseUrl });
        await waitFor(
          () =>
            answered < QUESTIONS
              ? hasCard(harness, ts, answered + 1)
              : harness.drawn(ts).some((message) => message.params.text === `Done ${session}.`),
          "the next card or the answer",
          60_000,
        );
        await harness.engine.idle();
      }
      for (const call of harness.slack.calls.slice(before)) {
        calls++;
        byKind[call.method] = (byKind[call.method] ?? 0) + 1;
      }
    }
  } finally {
    await harness.close();
  }
  return { calls, byKind };
}

function hasCard(harness: SlackHarness, ts: string, count: number): boolean {
  // A card is a message posted as one or a status line edited into one: the messages that ever showed ask controls.
  const cards = new Set(
    harness.slack.calls
      .filter((call) => call.ok && JSON.stringify(call.params.blocks ?? "").includes('"ask:'))
      .map((call) => String(call.method === "chat.update" ? call.params.ts : call.result.ts)),
  );
  return harness.drawn(ts).filter((message) => cards.has(message.ts)).length >= count;
}

async function discord(): Promise<{ calls: number; byKind: Record<string, number> }> {
  const harness = await new DiscordHarness().start();
  harness.anthropic.delayMs = modelMs;
  const byKind: Record<string, number> = {};
  let calls = 0;
  try {
    for (let session = 0; session < sessions; session++) {
      const questions = Array.from({ length: QUESTIONS }, (_, index) =>
        ask({ type: "buttons", question: `Question ${index}?`, options: ["a", "b"] }),
      );
      harness.anthropic.script(...questions, reply(`Done ${session}.`));
      const thread = await harness.mention(DISCORD_ALICE, "go");
      let card = await harness.card(thread);
      const before = harness.discord.calls.length;
      for (let answered = 1; answered <= QUESTIONS; answered++) {
        harness.discord.click(DISCORD_ALICE, card, componentWith(card, /:opt:0$/).custom_id);
        if (answered < QUESTIONS) card = await harness.card(thread, card);
        else await harness.botSays(thread, new RegExp(`Done ${session}\\.`));
        await harness.quiet();
      }
      for (const call of harness.discord.calls.slice(before)) {
        calls++;
        const kind = call.path.endsWith("/callback")
          ? "interaction ack"
          : call.path.endsWith("/typing")
            ? "typing"
            : `${call.method} message${call.path.endsWith("/messages") ? "" : " edit"}`;
        byKind[kind] = (byKind[kind] ?? 0) + 1;
      }
    }
  } finally {
    await harness.close();
  }
  return { calls, byKind };
}

const answered = sessions * QUESTIONS;
const perAsk = (result: { calls: number; byKind: Record<string, number> }) => ({
  perAnsweredAsk: result.calls / answered,
  byKind: Object.fromEntries(Object.entries(result.byKind).map(([kind, count]) => [kind, count / answered])),
});
const slackResult = await slack();
const discordResult = await discord();
process.stdout.write(`${JSON.stringify({ sessions, modelMs, answered, slack: perAsk(slackResult), discord: perAsk(discordResult) })}\n`);
process.exit(0);
