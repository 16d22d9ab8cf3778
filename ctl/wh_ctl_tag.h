/*
 * wh_ctl_tag.h - `webhookctl tag`: revision tags (set, generate, list, remove).
 */
#ifndef WH_CTL_TAG_H
#define WH_CTL_TAG_H

/* argv[0] is "tag"; returns the exit status (0 ok, 1 failure, 2 usage). */
int wh_ctl_tag(int argc, char **argv);

#endif
