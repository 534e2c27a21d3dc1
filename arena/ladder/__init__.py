"""The continuous ladder: a competition server that keeps playing duplicate pairs between active versions."""
