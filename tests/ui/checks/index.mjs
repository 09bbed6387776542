// Every browser check, in the order the runner starts them (PARALLEL at a
// time; those marked waitsForData, the thermal-runaway checks, start at once
// and wait beside the others).
import { ALERT_CHECKS } from './alerts.mjs';
import { BASIC_AUTH_CHECKS } from './basic_auth.mjs';
import { EXPLORE_CHECKS } from './explore.mjs';
import { HEATMAP_CHECKS } from './heatmap.mjs';
import { PAGE_CHECKS } from './pages.mjs';
import { THERMAL_CHECKS } from './thermal.mjs';
import { TRAINING_CHECKS } from './training.mjs';
import { URL_STATE_CHECKS } from './url_state.mjs';

export const CHECKS = [
  ...PAGE_CHECKS,
  ...HEATMAP_CHECKS,
  ...ALERT_CHECKS,
  ...EXPLORE_CHECKS,
  ...URL_STATE_CHECKS,
  ...TRAINING_CHECKS,
  ...BASIC_AUTH_CHECKS,
  ...THERMAL_CHECKS,
];
