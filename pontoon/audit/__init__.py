"""What a regulator and a pit boss read from the store: game recall (:mod:`.recall`) and
table reports against theory (:mod:`.report`, the theory from :mod:`.theory`)."""
