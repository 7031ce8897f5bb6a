#ifndef DL_VERSION_H
#define DL_VERSION_H
#ifndef DL_VERSION
#define DL_VERSION "0.1.0"
#endif
#endif
