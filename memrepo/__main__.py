from memrepo.cli import main

main()
