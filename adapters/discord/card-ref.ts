import { z } from "zod";

const cardRefSchema = z.object({ channelId: z.string().min(1), messageId: z.string().min(1) });

export type DiscordCardRef = z.infer<typeof cardRefSchema>;

export function writeCardRef(reference: DiscordCardRef): string {
  return JSON.stringify({ channelId: reference.channelId, messageId: reference.messageId });
}

/** The stored reference, or undefined when it is missing or unreadable: never a throw on a stored string. */
export function readCardRef(text: string | null): DiscordCardRef | undefined {
  if (text === null) return undefined;
  try {
    const parsed = cardRefSchema.safeParse(JSON.parse(text));
    return parsed.success ? parsed.data : undefined;
  } catch {
    return undefined;
  }
}
