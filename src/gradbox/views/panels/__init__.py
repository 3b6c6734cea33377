"""Side panels: designer, parameter table, lessons, training loop, playground.

    parameters        the Parameters & gradients panel (parameter_table: its model;
                      parameter_cells: how its cells are drawn and edited)
    playground        the expression playground (playground_demos: its lower tabs;
                      playground_text: how its messages are worded)
"""
