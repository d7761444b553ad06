/**
 * @module runtime/container-spec
 * What a stdio spec carries when its plugin is a container image (issue #26; runtime/container.ts
 * runs it). Its own module so that `types.ts` needs nothing of the launcher.
 */
import { z } from 'zod';

export const containerSpecSchema = z.object({
  /** The image reference as the engine resolves it (`ghcr.io/o/x:1`, `localhost/x:latest`, an image id). */
  image: z.string().min(1).max(512).regex(/^[A-Za-z0-9][A-Za-z0-9._/:@+-]*$/, 'not an image reference'),
});
export type ContainerSpec = z.output<typeof containerSpecSchema>;
