"""The participant's rooms, one per audience, each above the next: pages/, way/, recruitment/, events/."""
