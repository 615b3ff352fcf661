import { z } from "zod";

const cardRefSchema = z.object({ channel: z.string().min(1), ts: z.string().min(1) });

export type SlackCardRef = z.infer<typeof cardRefSchema>;

export function writeCardRef(reference: SlackCardRef): string {
  return JSON.stringify({ channel: reference.channel, ts: reference.ts });
}

export function readCardRef(text: string | null): SlackCardRef | undefined {
  if (text === null) return undefined;
  try {
    const parsed = cardRefSchema.safeParse(JSON.parse(text));
    return parsed.success ? parsed.data : undefined;
  } catch {
    return undefined;
  }
}
