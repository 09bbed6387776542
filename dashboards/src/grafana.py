"""Builders for Grafana's dashboard JSON model (schemaVersion 39, Grafana 11/12).

Only current core panel types are built (timeseries, stat, gauge, bargauge,
table, heatmap, state-timeline, text); every panel queries the dashboard's
`${datasource}` variable, sets a unit and thresholds, and is placed on the
24-column grid by a Layout, which assigns ids and positions so panels never
overlap. Queries are written with gpumon's native metric names; the
dcgm-exporter variant is produced from the result by `gpumon dashboards
convert` (generate.py), never written here.
"""

SCHEMA_VERSION = 39
DATASOURCE = {"type": "prometheus", "uid": "${datasource}"}
GRID_WIDTH = 24

# Colours Grafana's palette names.
OK, WARNING, CRITICAL, NEUTRAL = "green", "orange", "red", "blue"


def thresholds(*steps, base=OK):
    """Absolute threshold steps: base colour from -inf, then (value, colour)."""
    return {"mode": "absolute",
            "steps": [{"color": base, "value": None}] +
                     [{"color": c, "value": v} for v, c in steps]}


def target(expr, legend="__auto", ref="A", instant=False, table=False, heatmap=False,
           hide=False):
    t = {"datasource": DATASOURCE, "editorMode": "code", "expr": expr,
         "instant": instant, "legendFormat": legend, "range": not instant, "refId": ref}
    if table:
        t["format"] = "table"
    elif heatmap:
        t["format"] = "heatmap"
    if hide:
        t["hide"] = True
    return t


def targets(*specs):
    """Targets from (expr, legend) pairs (or bare expressions), refIds A, B, ..."""
    out = []
    for i, spec in enumerate(specs):
        expr, legend = (spec, "__auto") if isinstance(spec, str) else spec
        out.append(target(expr, legend, ref=chr(ord("A") + i)))
    return out


def _panel(kind, title, description, tgts, unit, thr, options, custom=None, min_=None,
           max_=None, mappings=None, overrides=None, links=None, transformations=None,
           color=None, decimals=None, interval=None):
    defaults = {"color": color or {"mode": "thresholds"}, "mappings": mappings or [],
                "thresholds": thr or thresholds(base=NEUTRAL), "unit": unit}
    if custom is not None:
        defaults["custom"] = custom
    if min_ is not None:
        defaults["min"] = min_
    if max_ is not None:
        defaults["max"] = max_
    if decimals is not None:
        defaults["decimals"] = decimals
    p = {"datasource": DATASOURCE, "description": description,
         "fieldConfig": {"defaults": defaults, "overrides": overrides or []},
         "options": options, "targets": tgts, "title": title, "type": kind}
    if links:
        p["links"] = links
    if transformations:
        p["transformations"] = transformations
    if interval:
        p["interval"] = interval
    return p


def _legend(table=False, calcs=None, placement="bottom"):
    return {"calcs": calcs or [], "displayMode": "table" if table else "list",
            "placement": placement, "showLegend": True}


def _tooltip(mode="multi"):
    return {"mode": mode, "sort": "desc" if mode == "multi" else "none"}


def _reduce(calc="lastNotNull"):
    return {"calcs": [calc], "fields": "", "values": False}


def timeseries(title, description, tgts, unit, thr=None, threshold_style="off", min_=None,
               max_=None, overrides=None, draw="line", stack=False, legend_table=False,
               links=None, fill=10):
    custom = {"axisPlacement": "auto", "drawStyle": draw, "fillOpacity": fill,
              "gradientMode": "none", "lineInterpolation": "linear", "lineWidth": 1,
              "pointSize": 4, "showPoints": "never", "spanNulls": False,
              "stacking": {"group": "A", "mode": "normal" if stack else "none"},
              "thresholdsStyle": {"mode": threshold_style}}
    options = {"legend": _legend(table=legend_table, calcs=["lastNotNull", "max"]
                                 if legend_table else None),
               "tooltip": _tooltip()}
    return _panel("timeseries", title, description, tgts, unit, thr, options, custom, min_,
                  max_, overrides=overrides, links=links,
                  color={"mode": "palette-classic"})


def stat(title, description, tgts, unit, thr=None, calc="lastNotNull", links=None,
         mappings=None, decimals=None, graph=False, color_mode="background"):
    options = {"colorMode": color_mode, "graphMode": "area" if graph else "none",
               "justifyMode": "auto", "orientation": "auto", "percentChangeColorMode":
               "standard", "reduceOptions": _reduce(calc), "showPercentChange": False,
               "textMode": "auto", "wideLayout": True}
    return _panel("stat", title, description, tgts, unit, thr, options, links=links,
                  mappings=mappings, decimals=decimals)


def gauge(title, description, tgts, unit, thr=None, min_=None, max_=None, calc="lastNotNull"):
    options = {"minVizHeight": 75, "minVizWidth": 75, "orientation": "auto",
               "reduceOptions": _reduce(calc), "showThresholdLabels": False,
               "showThresholdMarkers": True, "sizing": "auto"}
    return _panel("gauge", title, description, tgts, unit, thr, options, min_=min_, max_=max_)


def bargauge(title, description, tgts, unit, thr=None, min_=None, max_=None,
             calc="lastNotNull", orientation="horizontal"):
    options = {"displayMode": "gradient", "legend": _legend(), "maxVizHeight": 300,
               "minVizHeight": 16, "minVizWidth": 8, "namePlacement": "auto",
               "orientation": orientation, "reduceOptions": _reduce(calc),
               "showUnfilled": True, "sizing": "auto", "valueMode": "color"}
    options["legend"]["showLegend"] = False
    return _panel("bargauge", title, description, tgts, unit, thr, options, min_=min_,
                  max_=max_)


def table(title, description, tgts, unit, thr=None, transformations=None, overrides=None,
          mappings=None):
    custom = {"align": "auto", "cellOptions": {"type": "auto"}, "inspect": False}
    options = {"cellHeight": "sm", "showHeader": True, "frameIndex": 0}
    return _panel("table", title, description, tgts, unit, thr, options, custom,
                  transformations=transformations, overrides=overrides, mappings=mappings)


def heatmap(title, description, tgts, unit, calculate, thr=None, min_=None, max_=None,
            scheme="RdYlGn", reverse=False):
    """calculate=False: one row per series (e.g. one per GPU), coloured by
    value; calculate=True: Grafana buckets the values of all series per time
    interval into a distribution."""
    options = {"calculate": calculate,
               "cellGap": 1,
               "color": {"exponent": 0.5, "fill": "dark-orange", "mode": "scheme",
                         "reverse": reverse, "scale": "exponential", "scheme": scheme,
                         "steps": 64},
               "exemplars": {"color": "rgba(255,0,255,0.7)"},
               "legend": {"show": True},
               "rowsFrame": {"layout": "auto"},
               "tooltip": {"mode": "single", "showColorScale": False, "yHistogram": False},
               "yAxis": {"axisPlacement": "left", "reverse": False}}
    if calculate:
        options["yAxis"]["unit"] = unit
    if min_ is not None:
        options["color"]["min"] = min_
    if max_ is not None:
        options["color"]["max"] = max_
    custom = {"hideFrom": {"legend": False, "tooltip": False, "viz": False},
              "scaleDistribution": {"type": "linear"}}
    return _panel("heatmap", title, description, tgts, unit, thr, options, custom)


def state_timeline(title, description, tgts, unit, mappings, thr=None):
    custom = {"fillOpacity": 80, "hideFrom": {"legend": False, "tooltip": False, "viz": False},
              "lineWidth": 0}
    options = {"alignValue": "left", "legend": _legend(), "mergeValues": True,
               "rowHeight": 0.9, "showValue": "never", "tooltip": _tooltip("single")}
    return _panel("state-timeline", title, description, tgts, unit, thr, options, custom,
                  mappings=mappings, color={"mode": "thresholds"})


def value_text(value, text, color):
    """A value mapping: `value` shown as `text` in `color`."""
    return {"options": {str(value): {"color": color, "index": 0, "text": text}},
            "type": "value"}


def dashed_override(name_regex):
    """Draws the series whose display name matches as dashed lines (limits)."""
    return {"matcher": {"id": "byRegexp", "options": name_regex},
            "properties": [{"id": "custom.lineStyle", "value": {"dash": [10, 10],
                                                               "fill": "dash"}},
                           {"id": "custom.fillOpacity", "value": 0},
                           {"id": "color", "value": {"fixedColor": "red", "mode": "fixed"}}]}


def dashboard_link(title, uid, tooltip):
    """A panel link to another dashboard keeping time range and variables
    (in the url; the schema types panel links as dashboard links, so their
    fields are all set)."""
    return {"asDropdown": False, "icon": "dashboard", "includeVars": True, "keepTime": True,
            "tags": [], "targetBlank": False, "title": title, "tooltip": tooltip,
            "type": "link", "url": f"/d/{uid}?${{__url_time_range}}&${{__all_variables}}"}


class Layout:
    """Places panels left to right in rows of GRID_WIDTH columns and numbers
    them; row() starts a titled section on a new line."""

    def __init__(self):
        self.panels = []
        self._x = 0
        self._y = 0
        self._row_h = 0
        self._next_id = 1

    def _newline(self):
        self._y += self._row_h
        self._x = 0
        self._row_h = 0

    def row(self, title):
        if self._x:
            self._newline()
        self.panels.append({"collapsed": False, "gridPos": {"h": 1, "w": GRID_WIDTH, "x": 0,
                                                            "y": self._y},
                            "id": self._take_id(), "panels": [], "title": title,
                            "type": "row"})
        self._y += 1

    def add(self, panel, w, h):
        if self._x + w > GRID_WIDTH:
            self._newline()
        panel = dict(panel)
        panel["gridPos"] = {"h": h, "w": w, "x": self._x, "y": self._y}
        panel["id"] = self._take_id()
        # Stable key order: the generated files diff well.
        self.panels.append({k: panel[k] for k in sorted(panel)})
        self._x += w
        self._row_h = max(self._row_h, h)

    def _take_id(self):
        i = self._next_id
        self._next_id += 1
        return i


def query_variable(name, label, query, description, multi=True, include_all=True,
                   hide=0, sort=1):
    return {"allValue": ".*", "datasource": DATASOURCE,
            "description": description, "hide": hide,
            "includeAll": include_all, "label": label, "multi": multi, "name": name,
            "options": [],
            "query": {"qryType": 1, "query": query,
                      "refId": "PrometheusVariableQueryEditor-VariableQuery"},
            "refresh": 2, "regex": "", "skipUrlSync": False, "sort": sort, "type": "query"}


def datasource_variable():
    return {"description": "The Prometheus-compatible data source: gpumon "
            "server or any Prometheus that scrapes the GPUs.", "hide": 0, "includeAll": False,
            "label": "Data source", "multi": False, "name": "datasource", "options": [],
            "query": "prometheus", "refresh": 1, "regex": "", "skipUrlSync": False,
            "type": "datasource"}


def textbox_variable(name, label, default, description):
    return {"current": {"selected": False, "text": default, "value": default},
            "description": description, "hide": 0, "label": label, "name": name,
            "options": [{"selected": True, "text": default, "value": default}],
            "query": default, "skipUrlSync": False, "type": "textbox"}


def alert_annotation(selector):
    """Firing alerts from ALERTS as annotations (Grafana 10+ keeps the query
    in target; titleFormat/tagKeys are the Prometheus data source's)."""
    return {"datasource": DATASOURCE, "enable": True, "iconColor": "red",
            "name": "Firing alerts",
            "tagKeys": "alertname,severity,hostname,gpu",
            "target": {"expr": f'ALERTS{{alertstate="firing", {selector}}}',
                       "interval": "1m", "refId": "Anno"},
            "textFormat": "{{alertname}} on {{hostname}} GPU {{gpu}}",
            "titleFormat": "{{alertname}}", "useValueForTime": False}


def builtin_annotation():
    return {"builtIn": 1, "datasource": {"type": "grafana", "uid": "-- Grafana --"},
            "enable": True, "hide": True, "iconColor": "rgba(0, 211, 255, 1)",
            "name": "Annotations & Alerts", "type": "dashboard"}


def dashboard(uid, title, description, tags, variables, layout, links, annotations=(),
              time_from="now-6h", refresh="1m"):
    return {"annotations": {"list": [builtin_annotation(), *annotations]},
            "description": description, "editable": True, "fiscalYearStartMonth": 0,
            "graphTooltip": 1, "id": None, "links": links, "panels": layout.panels,
            "refresh": refresh, "schemaVersion": SCHEMA_VERSION, "tags": tags,
            "templating": {"list": variables},
            "time": {"from": time_from, "to": "now"},
            "timepicker": {"refresh_intervals": ["10s", "30s", "1m", "5m", "15m", "1h"]},
            "timezone": "browser", "title": title, "uid": uid, "version": 1,
            "weekStart": ""}
