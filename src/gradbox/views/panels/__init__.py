"""Side panels: designer, parameter table, lessons, training loop, playground."""
