"""The computation graph as data: traced from a `Value`, laid out, explained, exported.

Plain Python and numpy; the Qt views (`gradbox.views.graph.view` and its scenes) only
draw what this package says. One module per concern:

    core     `trace(root)`: the frozen structure and the live numbers (`Graph`)
    fanout   what each use of a node sent back, and how the parts add up
    layout   layered layout, folded sums, edge crossings
    network  the network level: neurons among the operations, weights, unit maps,
             the selected sample's path
    text     a node's details, Graphviz DOT, gradient colour classes
"""

from gradbox.graph.core import Graph, backward_order, trace
from gradbox.graph.fanout import Contribution, FanOut, fanout_contributions, local_derivative
from gradbox.graph.layout import (
    FAINT_EDGE_LENGTH,
    assign_layers,
    clear_layout_cache,
    count_crossings,
    folded_sums,
    is_faint_edge,
    layered_layout,
)
from gradbox.graph.network import (
    NetworkLevel,
    NeuronNodes,
    edge_products,
    edge_shares,
    network_level,
    neuron_nodes,
    neuron_subgraph,
    path_shares,
    unit_maps,
    weight_flows,
)
from gradbox.graph.text import details, gradient_bins, group_details, parse_dot_counts, to_dot

__all__ = [
    "FAINT_EDGE_LENGTH",
    "Contribution",
    "FanOut",
    "Graph",
    "NetworkLevel",
    "NeuronNodes",
    "assign_layers",
    "backward_order",
    "clear_layout_cache",
    "count_crossings",
    "details",
    "edge_products",
    "edge_shares",
    "fanout_contributions",
    "folded_sums",
    "gradient_bins",
    "group_details",
    "is_faint_edge",
    "layered_layout",
    "local_derivative",
    "network_level",
    "neuron_nodes",
    "neuron_subgraph",
    "parse_dot_counts",
    "path_shares",
    "to_dot",
    "trace",
    "unit_maps",
    "weight_flows",
]
