print("presignd-bench: nothing yet")
