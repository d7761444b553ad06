/**
 * @module api/routes/plugins/parts
 * What every plugin route group is built from, and the name rule their bodies share.
 */
import { z } from 'zod';
import type { PluginService } from '../../../plugins/service.ts';
import type { TenantVisibility } from '../../tenancy.ts';
import type { PluginVisibility } from './visibility.ts';

/** The services and tenant filters a plugin route group uses. */
export interface PluginRouteParts {
  plugins: PluginService;
  tenancy: TenantVisibility;
  visibility: PluginVisibility;
}

/** A plugin, workspace or project name in a request. */
export const nameSchema = z.string().min(1).max(64);
