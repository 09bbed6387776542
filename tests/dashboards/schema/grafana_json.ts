// Types for checking Grafana dashboard JSON against @grafana/schema's
// TypeScript types (validate_schema.py generates one .ts file per dashboard
// that uses these with `satisfies`).
//
// JSON has no TypeScript enums: a dashboard holds an enum's value, so Json<T>
// turns every string enum into the union of its values (numeric enums accept
// their number literals as they are). PartialJson<T> also makes every member
// optional, at every depth: Grafana fills panel options and custom field
// config it does not find with the panel plugin's defaults, so those are
// checked for unknown keys and wrong value types, not for completeness.
import type {
  AnnotationQuery,
  DashboardLink,
  DataQuery,
  Panel,
  RowPanel,
  VariableModel,
} from '@grafana/schema';
import type { Dashboard } from '@grafana/schema';

export type Json<T> = T extends string
  ? `${T}`
  : T extends number | boolean | null | undefined
    ? T
    : T extends ReadonlyArray<infer U>
      ? Array<Json<U>>
      : T extends object
        ? { [K in keyof T]: Json<T[K]> }
        : T;

export type PartialJson<T> = T extends string
  ? `${T}`
  : T extends number | boolean | null | undefined
    ? T
    : T extends ReadonlyArray<infer U>
      ? Array<PartialJson<U>>
      : T extends object
        ? { [K in keyof T]?: PartialJson<T[K]> }
        : T;

// A Prometheus query target. @grafana/schema has no Prometheus query type
// (the Prometheus plugin's PromQuery lives in @grafana/prometheus, which
// brings React along), so its fields are declared here as that plugin's
// PromQuery defines them; everything else is DataQuery's.
export interface PrometheusQuery extends DataQuery {
  expr: string;
  legendFormat?: string;
  instant?: boolean;
  range?: boolean;
  exemplar?: boolean;
  format?: 'time_series' | 'table' | 'heatmap';
  editorMode?: 'code' | 'builder';
  interval?: string;
  intervalFactor?: number;
}

// A Prometheus annotation: the query in `target` (Grafana 10+), and the
// Prometheus plugin's formatting fields beside the schema's own.
export interface PrometheusAnnotation extends AnnotationQuery<PrometheusQuery> {
  titleFormat?: string;
  textFormat?: string;
  tagKeys?: string;
  useValueForTime?: boolean;
  step?: string;
}

// The dashboard without its panels, variables and annotations, which are
// checked one by one with their precise types.
export type DashboardFrame = Json<Omit<Dashboard, 'panels' | 'templating' | 'annotations'>> & {
  panels: Array<Json<Panel> | Json<RowPanel>>;
  templating: { list: Array<Json<VariableModel>> };
  annotations: { list: Array<Json<PrometheusAnnotation> | Json<AnnotationQuery>> };
  links: Array<Json<DashboardLink>>;
};

export type { Panel, RowPanel, VariableModel, AnnotationQuery };
