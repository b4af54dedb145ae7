"""An example crux_lab plug-in: a toy engine (:mod:`.engine`) and a toy backend (:mod:`.backend`)."""
