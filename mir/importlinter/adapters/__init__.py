"""Files in, graph and raw options out: config readers and the source scanner."""
