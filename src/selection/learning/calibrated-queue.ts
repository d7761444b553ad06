/**
 * @module selection/learning/calibrated-queue
 * The learning service's one background queue: captures, scope loads and overlay updates run
 * on it one at a time, off every search's path. Beside it, the floors of this embedder (issue
 * #25): the lexical agreement floor (agreement.ts) and, when the settings ask for it, the
 * similarity floor (retrieval/calibration.ts), written into the shared `scoring`. They are
 * calibrated once, when a task first needs them (`calibrated()`: a capture, an overlay built
 * from learned examples), so nothing ranks with a wrong floor, and a process that never learns
 * or ranks with learned examples never pays for them: a CLI command, or a server whose
 * organisations have learned nothing yet, searching (~0.18 s of CPU on the first search before).
 */
import type { Logger } from '../../core/logger.ts';
import type { Embedder } from '../../retrieval/embedders/embedder.ts';
import { calibrateFloor, shippedCalibrationGroups, type FloorCalibration } from '../../retrieval/calibration.ts';
import { calibrateAgreementFloor, type AgreementCalibration } from './agreement.ts';
import { contentTerms, type OverlayScoring } from './overlay.ts';
import type { LearningSettings } from './settings.ts';

/** The queue, and what its calibration found. */
export interface CalibratedQueue {
  /** Runs `task` after everything queued before it; a failure is logged and counted. */
  schedule(task: () => Promise<void>): void;
  /** Resolves once the floors are calibrated (the first call calibrates; a task that needs a floor awaits this). */
  calibrated(): Promise<void>;
  /** Resolves once the queue stands still (tasks may queue more). */
  flush(): Promise<void>;
  /** How the similarity floor was computed, once it was. */
  calibration(): FloorCalibration | undefined;
  /** How the agreement floor was computed, once it was. */
  agreement(): AgreementCalibration | undefined;
}

/** Floors used when the public calibration data or the embedder fails: only near-repeats teach, agree or conflict. */
const CAUTIOUS_FLOOR = 0.9;

export function createCalibratedQueue(input: {
  embedder: Embedder;
  settings: Pick<LearningSettings, 'minSimilarity'>;
  /** Written by the calibration: `minSimilarity` (when calibrated) and `agreementFloor`. */
  scoring: OverlayScoring;
  logger: Logger;
  /** Called when a task fails (after it is logged). */
  onError: () => void;
}): CalibratedQueue {
  const { embedder, settings, scoring, logger } = input;
  let tail: Promise<void> = Promise.resolve();
  let calibration: FloorCalibration | undefined;
  let agreement: AgreementCalibration | undefined;
  let calibrating: Promise<void> | undefined;

  const enqueue = (task: () => Promise<void>): void => {
    tail = tail.then(task).catch((error: unknown) => {
      input.onError();
      logger.warn({ err: error }, 'learning: task failed');
    });
  };

  async function calibrate(): Promise<void> {
    let groups: string[][] = [];
    try {
      groups = shippedCalibrationGroups();
      // Lexical, so no embedder: when learned requests count as alike (agreement.ts).
      agreement = calibrateAgreementFloor(groups, contentTerms, { maxGroups: 80 });
      scoring.agreementFloor = agreement.floor;
    } catch (error) {
      scoring.agreementFloor = CAUTIOUS_FLOOR;
      logger.warn({ err: error }, 'learning: could not calibrate the agreement floor; using 0.9 (near-repeats only)');
    }
    if (settings.minSimilarity !== 'calibrated') return;
    try {
      if (groups.length === 0) throw new Error('no public calibration requests');
      calibration = await calibrateFloor(embedder, groups, { maxGroups: 40 });
      scoring.minSimilarity = calibration.floor;
      logger.info({ model: calibration.model, floor: calibration.floor, sameToolAbove: calibration.sameToolAbove }, 'learning: similarity floor calibrated');
    } catch (error) {
      scoring.minSimilarity = CAUTIOUS_FLOOR;
      logger.warn({ err: error }, 'learning: could not calibrate the similarity floor; using 0.9 (near-repeats only)');
    }
  }

  return {
    schedule: enqueue,
    calibrated: () => (calibrating ??= calibrate()),
    async flush() {
      for (let seen: Promise<void> | undefined; seen !== tail; ) {
        seen = tail;
        await tail;
      }
    },
    calibration: () => calibration,
    agreement: () => agreement,
  };
}
