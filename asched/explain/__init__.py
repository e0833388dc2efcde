"""``asched explain``: evaluate every node for one pod and say why it goes where it goes."""
