"""Reading a finished run, for people: its transcript (``show``: `runs show`, the run page's), its context chart
(``chart``), its figures (``figures``: what the metrics emit and ``runs stats`` adds up) and the figures of many
runs (``stats``). Each reads the typed run (``views``), never the stored items; the run page (``pages``) lays them
out."""
