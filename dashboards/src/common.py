"""What the gpumon dashboards share: the naming-scheme variant each is built
for (uid, title, tags, links between them), the template variables and the
label matchers every GPU query carries."""

from . import grafana

# Every GPU query selects with these; each variable's "All" is `.*`, which
# also matches series without the label (a fleet without a cluster label).
GPU = 'job=~"$job", cluster=~"$cluster", hostname=~"$node", gpu=~"$gpu"'

# The uids, one per audience; the dcgm variant inserts "-dcgm".
AUDIENCES = ("executive", "operations", "capacity", "training")


class Variant:
    """A naming scheme's metadata: which uids, titles and tags the dashboards
    get. Queries are always written with native names; `gpumon dashboards
    convert --names dcgm` rewrites them for the dcgm variant."""

    def __init__(self, scheme):
        assert scheme in ("native", "dcgm")
        self.scheme = scheme

    def uid(self, audience):
        return f"gpumon-dcgm-{audience}" if self.scheme == "dcgm" else f"gpumon-{audience}"

    def title(self, name):
        return f"gpumon (dcgm-exporter) / {name}" if self.scheme == "dcgm" else f"gpumon / {name}"

    @property
    def scheme_tag(self):
        return f"gpumon-{self.scheme}"

    def tags(self, audience):
        return ["gpumon", self.scheme_tag, audience]

    def links(self):
        """The dropdown of the other dashboards of the same scheme."""
        return [{"asDropdown": True, "icon": "external link", "includeVars": True,
                 "keepTime": True, "tags": [self.scheme_tag], "targetBlank": False,
                 "title": "gpumon dashboards", "tooltip": "", "type": "dashboards", "url": ""}]

    def describe(self, text):
        if self.scheme == "dcgm":
            return (text + " This variant reads dcgm-exporter's metric names (DCGM_FI_DEV_*; "
                    "labels Hostname, UUID, modelName, gpu); it is generated from the native "
                    "one, and panels that need a metric dcgm-exporter lacks say so.")
        return text + " This variant reads gpumon's native metric names."


def gpu_variables():
    """datasource, job, cluster, node (the hostname label) and gpu, chained."""
    metric = "gpu_temperature_celsius"
    return [
        grafana.datasource_variable(),
        grafana.query_variable("job", "Job", f"label_values({metric}, job)",
                               "Prometheus scrape job of the GPU agents."),
        grafana.query_variable("cluster", "Cluster",
                               f'label_values({metric}{{job=~"$job"}}, cluster)',
                               "The cluster label, where targets carry one (empty otherwise)."),
        grafana.query_variable("node", "Node",
                               f'label_values({metric}{{job=~"$job", cluster=~"$cluster"}}, '
                               'hostname)', "The GPU node (hostname label)."),
        grafana.query_variable("gpu", "GPU",
                               f'label_values({metric}{{job=~"$job", cluster=~"$cluster", '
                               'hostname=~"$node"}, gpu)', "The GPU index on its node."),
    ]
